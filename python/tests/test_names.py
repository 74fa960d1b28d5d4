"""Object ids, output paths and input names: the same answer as Java and C for every byte string of the
golden file (``ObjectIdTest`` writes it), and the rule's own properties over random byte strings."""

import pathlib
import random
import unittest

from falkon import names

GOLDEN = pathlib.Path(__file__).resolve().parents[2] / "protocol" / "src" / "test" / "resources" / "names.txt"
CHECKS = {"id": names.object_id_problem, "path": names.output_path_problem, "name": names.input_name_problem}


class GoldenNamesTest(unittest.TestCase):
    def test_every_line_gets_the_answer_java_and_c_give(self):
        lines = [l for l in GOLDEN.read_text(encoding="ascii").splitlines() if l and not l.startswith("#")]
        self.assertGreater(len(lines), 9000)
        for line in lines:
            kind, hexed, answer = line.split(" ")
            value = b"" if hexed == "-" else bytes.fromhex(hexed)
            self.assertEqual(answer, "refused" if CHECKS[kind](value) else "ok", line)


class NamesTest(unittest.TestCase):
    def test_refusals_name_what_is_wrong(self):
        self.assertIsNone(names.object_id_problem("results/r-1"))
        self.assertIn("relative", names.object_id_problem("/etc/passwd"))
        self.assertIn("'..'", names.object_id_problem("res/q/../x"))
        self.assertIn("U+0000", names.object_id_problem("res/x\x00-other"))
        self.assertIn("U+000A", names.object_id_problem("k\nevil"))
        self.assertIn("UTF-8", names.object_id_problem(b"\xff"))
        self.assertIsNone(names.output_path_problem("/home/me/out.txt"))
        self.assertIn("'..'", names.output_path_problem("../x"))
        self.assertIsNone(names.input_name_problem("diffs/"))
        self.assertIsNotNone(names.input_name_problem("a/b"))

    def test_over_random_byte_strings_an_accepted_id_is_canonical(self):
        rnd = random.Random(53)
        alphabet = [b"a", b"/", b".", b"..", b"\x00", b"\n", b"\x7f", b"\xc2\x85", b"\xc3\xa9", b"\xff", b"\xed\xa0\x80"]
        accepted = 0
        for _ in range(20000):
            raw = b"".join(rnd.choice(alphabet) for _ in range(rnd.randrange(10)))
            if names.object_id_problem(raw) is None:
                accepted += 1
                text = raw.decode("utf-8")
                segments = text.split("/")
                self.assertTrue(all(s and s not in (".", "..") for s in segments), raw)
                self.assertFalse(any(ord(c) < 32 or 127 <= ord(c) <= 159 for c in text), raw)
                self.assertIsNone(names.output_path_problem("/" + text), raw)  # an id is a path too
        self.assertGreater(accepted, 500)


if __name__ == "__main__":
    unittest.main()
