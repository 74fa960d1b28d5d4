"""The wire module against the protocol's table (protocol/src/main/resources/io/falkon/protocol/protocol.table):
every message, its fields in order, the structures they nest, the extension tags, statuses, error codes and
flags, as Java's ProtocolTableTest and C's test_table.c check theirs."""

import pathlib
import unittest

from falkon import wire

TABLE = (pathlib.Path(__file__).resolve().parents[2] / "protocol" / "src" / "main" / "resources" / "io" / "falkon"
         / "protocol" / "protocol.table")


def read_table():
    rows = {"message": [], "struct": [], "ext": [], "status": [], "error": [], "flag": []}
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            kind, *rest = line.split()
            rows[kind].append(rest)
    return rows


def layout(fields, structs):
    """The table's fields in wire.py's form: ((name, kind), ...), structs inlined."""
    def kind(k):
        if k.startswith("list<"):
            return ("list", kind(k[5:-1]))
        if k in structs:
            return ("struct", layout(structs[k], structs))
        return k
    return tuple((f.split(":", 1)[0], kind(f.split(":", 1)[1])) for f in fields)


class ProtocolTableTest(unittest.TestCase):
    def setUp(self):
        self.rows = read_table()
        self.structs = {r[0]: r[1:] for r in self.rows["struct"]}

    def test_every_message_has_the_tables_code_name_and_fields(self):
        table = {int(r[0], 16): (r[1], layout(r[2:], self.structs)) for r in self.rows["message"]}
        self.assertEqual(sorted(table), sorted(wire.MESSAGES))
        for code, (name, fields) in table.items():
            self.assertEqual((name, fields), wire.MESSAGES[code], f"message 0x{code:02X}")
        self.assertEqual(layout(self.structs["TASK_SPEC"], self.structs), wire.TASK_SPEC)
        self.assertEqual(layout(self.structs["EXECUTION"], self.structs), wire.EXECUTION)

    def test_the_constants_wire_names_are_the_tables(self):
        for code, name, _ in self.rows["ext"]:
            value = getattr(wire, "EXT_" + name, None)
            if value is not None:  # the client sets or reads only some tags
                self.assertEqual(int(code, 16), value, name)
        named = {"EXT_" + name: int(code, 16) for code, name, _ in self.rows["ext"]}
        for attr in dir(wire):
            if attr.startswith("EXT_"):
                self.assertEqual(named.get(attr), getattr(wire, attr), f"{attr} is not the table's")
        self.assertEqual(tuple(r[1] for r in sorted(self.rows["status"], key=lambda r: int(r[0]))), wire.STATUS_NAMES)
        self.assertEqual({int(c): n for c, n in self.rows["error"]}, wire.ERROR_NAMES)
        for bit, name in self.rows["flag"]:
            value = getattr(wire, "FLAG_" + name, None)
            if value is not None:
                self.assertEqual(int(bit), value, name)
        self.assertEqual(wire.FLAG_STDOUT_TRUNCATED, 1)


if __name__ == "__main__":
    unittest.main()
