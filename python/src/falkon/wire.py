"""The Falkon wire protocol, version 2 (docs/protocol.md), as a table of message layouts.

Each message is a ``dict`` of its fields in wire order, plus ``"type"`` (its name). One table
drives encoding, decoding and the golden-vector dump, so the three cannot drift apart. A task
spec travels as a ``blob`` whose bytes are themselves a ``TaskSpec``; here it is the nested
``dict`` (encoded into its blob on the way out, decoded on the way in).
"""

import re
import struct

MAGIC = 0x46414C4B  # "FALK"
VERSION = 2
ROLE_EXECUTOR = 1
ROLE_CLIENT = 2
DEFAULT_MAX_FRAME_LENGTH = 16 * 1024 * 1024

# Execution.status values (section 4.4)
EXITED, TIMEOUT, LAUNCH_FAILED, EXECUTOR_LOST, CANCELLED, REJECTED, FETCH_FAILED = range(7)
STATUS_NAMES = ("EXITED", "TIMEOUT", "LAUNCH_FAILED", "EXECUTOR_LOST", "CANCELLED", "REJECTED",
                "FETCH_FAILED", "OUTPUT_FAILED", "DEPENDENCY_FAILED")

# ERROR codes (section 4.1)
ERROR_NAMES = {1: "MALFORMED", 2: "UNSUPPORTED_VERSION", 3: "UNAUTHORIZED", 4: "UNEXPECTED_MESSAGE",
               5: "FRAME_TOO_LARGE", 6: "HANDSHAKE_TIMEOUT", 10: "UNKNOWN_INSTANCE", 11: "INVALID_TASK",
               12: "DUPLICATE_EXECUTOR", 13: "SHUTTING_DOWN", 14: "BUSY"}
UNKNOWN_INSTANCE, INVALID_TASK, SHUTTING_DOWN, BUSY = 10, 11, 13, 14

# TaskSpec.ext tags (section 6)
EXT_RETRIES = 0x0001
EXT_RETRIES_ON_FAILURE = 0x0005
EXT_NAME = 0x0006
EXT_AFTER = 0x0007
EXT_PRIORITY = 0x0008
EXT_RESOURCES = 0x0009
EXT_WORKER = 0x000A
EXT_DISK = 0x000D
EXT_NAMED_RESOURCES = 0x000E

# Execution.flags
FLAG_STDOUT_TRUNCATED = 1
FLAG_STDERR_TRUNCATED = 2
MAX_CORES = 65536
MAX_MEMORY_MIB = 2**32 - 1
MAX_DISK_MIB = 2**32 - 1
# Execution.ext: which task a DEPENDENCY_FAILED result needed
EXT_DEPENDENCY = 0x0021
MAX_NAME_BYTES = 1024

# Field kinds: a name below, ("list", kind), ("struct", fields), or "spec" (a blob holding a TaskSpec).
TASK_SPEC = (("argv", ("list", "str")), ("env", "map"), ("workDir", "str"), ("wallTimeMillis", "u32"),
             ("ext", "ext"))
EXECUTION = (("status", "u8"), ("exitCode", "i32"), ("flags", "u8"), ("startedMicros", "i64"),
             ("finishedMicros", "i64"), ("stdout", "blob"), ("stderr", "blob"), ("detail", "str"),
             ("ext", "ext"))

MESSAGES = {
    0x01: ("HELLO", (("magic", "u32"), ("version", "u16"), ("role", "u8"), ("token", "str"), ("agent", "str"))),
    0x02: ("WELCOME", (("version", "u16"), ("heartbeatMillis", "u32"), ("maxFrameLength", "u32"),
                       ("dispatcherId", "str"))),
    0x03: ("HEARTBEAT", (("timeMicros", "i64"),)),
    0x04: ("ERROR", (("requestId", "u32"), ("code", "u16"), ("message", "str"))),
    0x10: ("REGISTER", (("executorId", "str"), ("host", "str"), ("slots", "u32"), ("flags", "u32"),
                        ("attributes", "map"))),
    0x11: ("CREDIT", (("credits", "u32"),)),
    0x12: ("DISPATCH", (("tasks", ("list", ("struct", (("taskId", "u64"), ("attempt", "u32"), ("spec", "spec"),
                                                        ("ext", "ext"))))),)),
    0x13: ("RESULT", (("credits", "u32"),
                      ("results", ("list", ("struct", (("taskId", "u64"), ("attempt", "u32"),
                                                       ("execution", ("struct", EXECUTION)))))))),
    0x14: ("CANCEL", (("taskIds", ("list", "u64")),)),
    0x15: ("CACHE_UPDATE", (("full", "u8"), ("added", ("list", ("struct", (("id", "str"), ("size", "i64"))))),
                            ("removed", ("list", "str")))),
    0x16: ("RELEASE", (("ids", ("list", "str")),)),
    0x17: ("REPLICATE", (("objects", ("list", ("struct", (("id", "str"), ("source", "str"), ("size", "i64"),
                                                         ("checksum", "str"), ("peers", ("list", "str")))))),)),
    0x20: ("CREATE_INSTANCE", (("requestId", "u32"), ("clientName", "str"), ("leaseSeconds", "u32"))),
    0x21: ("INSTANCE_CREATED", (("requestId", "u32"), ("instanceId", "u64"), ("secret", "str"))),
    0x22: ("SUBMIT", (("requestId", "u32"), ("instanceId", "u64"),
                      ("tasks", ("list", ("struct", (("clientTaskId", "u64"), ("spec", "spec"))))))),
    0x23: ("SUBMITTED", (("requestId", "u32"), ("instanceId", "u64"), ("accepted", "u32"))),
    0x24: ("DELIVER", (("instanceId", "u64"),
                       ("results", ("list", ("struct", (("clientTaskId", "u64"), ("seq", "u64"), ("attempt", "u32"),
                                                        ("executorId", "str"), ("submittedMicros", "i64"),
                                                        ("dispatchedMicros", "i64"), ("completedMicros", "i64"),
                                                        ("execution", ("struct", EXECUTION)))))))),
    0x25: ("STATUS_REQUEST", (("requestId", "u32"), ("instanceId", "u64"))),
    0x26: ("STATUS", (("requestId", "u32"), ("json", "str"))),
    0x27: ("DESTROY", (("requestId", "u32"), ("instanceId", "u64"))),
    0x28: ("DESTROYED", (("requestId", "u32"), ("instanceId", "u64"), ("cancelled", "u32"))),
    0x2C: ("HALT", (("requestId", "u32"), ("instanceId", "u64"))),
    0x2D: ("HALTED", (("requestId", "u32"), ("instanceId", "u64"), ("cancelled", "u32"))),
    0x2E: ("CANCEL_TASKS", (("requestId", "u32"), ("instanceId", "u64"), ("clientTaskIds", ("list", "u64")))),
    0x2F: ("TASKS_CANCELLED", (("requestId", "u32"), ("instanceId", "u64"), ("cancelled", "u32"))),
    0x30: ("ATTACH_MOVED", (("requestId", "u32"), ("instanceId", "u64"), ("secret", "str"),
                            ("movedClientTaskIds", ("list", "u64")))),
    0x29: ("ATTACH", (("requestId", "u32"), ("instanceId", "u64"), ("secret", "str"))),
    0x2A: ("ATTACHED", (("requestId", "u32"), ("instanceId", "u64"), ("highestClientTaskId", "i64"),
                        ("redelivered", "u32"))),
    0x2B: ("ACK", (("instanceId", "u64"), ("upToSeq", "u64"))),
}
TYPE_OF = {name: code for code, (name, _) in MESSAGES.items()}

_FIXED = {"u8": struct.Struct(">B"), "u16": struct.Struct(">H"), "u32": struct.Struct(">I"),
          "u64": struct.Struct(">Q"), "i32": struct.Struct(">i"), "i64": struct.Struct(">q")}
_U32 = _FIXED["u32"]
_U16 = _FIXED["u16"]
_MAX_COUNT = 2 ** 31 - 1


class ProtocolError(Exception):
    """Bytes that are not a valid frame; the message names the field (as in ``ERROR MALFORMED``)."""


class _Reader:
    __slots__ = ("buf", "pos", "end")

    def __init__(self, buf, pos=0, end=None):
        self.buf = buf
        self.pos = pos
        self.end = len(buf) if end is None else end

    def take(self, n, where):
        if n > self.end - self.pos:
            raise ProtocolError(f"{where}: truncated")
        start = self.pos
        self.pos += n
        return self.buf[start:self.pos]

    def fixed(self, kind, where):
        s = _FIXED[kind]
        if s.size > self.end - self.pos:
            raise ProtocolError(f"{where}: truncated")
        v = s.unpack_from(self.buf, self.pos)[0]
        self.pos += s.size
        return v

    def count(self, where, each=1):
        n = self.fixed("u32", where)
        if n > _MAX_COUNT or n * each > self.end - self.pos:
            raise ProtocolError(f"{where}: count {n} exceeds the frame")
        return n


def _read(r, kind, where):
    if kind in _FIXED:
        return r.fixed(kind, where)
    if kind == "str":
        return bytes(r.take(r.count(where), where)).decode("utf-8", "replace")
    if kind == "blob":
        return bytes(r.take(r.count(where), where))
    if kind == "map":
        out = {}
        for i in range(r.count(where, 8)):
            k = _read(r, "str", f"{where}[{i}].key")
            out[k] = _read(r, "str", f"{where}[{i}].value")
        return out
    if kind == "ext":
        out = []
        for i in range(r.fixed("u16", where)):
            tag = r.fixed("u16", f"{where}[{i}].tag")
            out.append((tag, _read(r, "blob", f"{where}[{i}].value")))
        return out
    if kind == "spec":
        n = r.count(where)
        inner = _Reader(r.buf, r.pos, r.pos + n)
        spec = _read_fields(inner, TASK_SPEC, where)
        if inner.pos != inner.end:
            raise ProtocolError(f"{where}: {inner.end - inner.pos} trailing bytes")
        r.pos += n
        return spec
    if kind[0] == "list":
        return [_read(r, kind[1], f"{where}[{i}]") for i in range(r.count(where))]
    if kind[0] == "struct":
        return _read_fields(r, kind[1], where)
    raise AssertionError(kind)


def _read_fields(r, fields, where):
    return {name: _read(r, kind, f"{where}.{name}") for name, kind in fields}


def _write(out, kind, v):
    if kind in _FIXED:
        out += _FIXED[kind].pack(v)
    elif kind == "str":
        b = v.encode("utf-8")
        out += _U32.pack(len(b))
        out += b
    elif kind == "blob":
        out += _U32.pack(len(v))
        out += v
    elif kind == "map":
        out += _U32.pack(len(v))
        for k, val in v.items():
            _write(out, "str", k)
            _write(out, "str", val)
    elif kind == "ext":
        out += _U16.pack(len(v))
        for tag, val in v:
            out += _U16.pack(tag)
            _write(out, "blob", val)
    elif kind == "spec":
        _write(out, "blob", encode_spec(v))
    elif kind[0] == "list":
        out += _U32.pack(len(v))
        for e in v:
            _write(out, kind[1], e)
    elif kind[0] == "struct":
        for name, k in kind[1]:
            _write(out, k, v[name])
    else:
        raise AssertionError(kind)


def encode_spec(spec):
    """The bytes of a ``TaskSpec`` (what a ``spec`` blob holds)."""
    return encode_task(spec["argv"], spec["env"], spec["workDir"], spec["wallTimeMillis"], spec["ext"])


def encode_task(argv, env, work_dir, wall_time_millis, ext):
    """The bytes of a ``TaskSpec`` from its fields (the submit path: no intermediate dict)."""
    parts = [_U32.pack(len(argv))]
    for a in argv:
        b = a.encode("utf-8")
        parts += (_U32.pack(len(b)), b)
    parts.append(_U32.pack(len(env)))
    for k, v in env.items():
        kb, vb = k.encode("utf-8"), v.encode("utf-8")
        parts += (_U32.pack(len(kb)), kb, _U32.pack(len(vb)), vb)
    wd = work_dir.encode("utf-8")
    parts += (_U32.pack(len(wd)), wd, _U32.pack(wall_time_millis), _U16.pack(len(ext)))
    for tag, val in ext:
        parts += (_U16.pack(tag), _U32.pack(len(val)), val)
    return b"".join(parts)


def check_task(argv, env, retries):
    """Refuses what the dispatcher would refuse, in the caller's thread, naming what is wrong."""
    if not argv or not argv[0]:
        raise ValueError("argv must have at least one element and argv[0] must not be empty")
    for k in env:
        if not k or "=" in k:
            raise ValueError(f"env: {k!r} is not a valid variable name")
    if retries is not None and not 0 <= retries <= 255:
        raise ValueError(f"retries must be within 0..255, got {retries}")


def retries_ext(retries):
    return [] if retries is None else [(EXT_RETRIES, bytes([retries]))]


def priority_ext(priority):
    """The PRIORITY field (docs/protocol.md): a signed 32-bit integer, higher starts first; 0 is left out."""
    if priority is None or priority == 0:
        return []
    if isinstance(priority, bool) or not isinstance(priority, int) or not -2**31 <= priority < 2**31:
        raise ValueError(f"priority must be a whole number within a signed 32-bit integer, got {priority!r}")
    return [(EXT_PRIORITY, struct.pack(">i", priority))]


def resources_ext(cores=None, memory=None):
    """The RESOURCES field (docs/protocol.md): the slots a task takes at once and the memory it needs
    of its executor in MiB; left out when neither is stated."""
    if cores is None and memory is None:
        return []
    cores = 1 if cores is None else cores
    memory = 0 if memory is None else memory
    if isinstance(cores, bool) or not isinstance(cores, int) or not 1 <= cores <= MAX_CORES:
        raise ValueError(f"cores must be a whole number 1..{MAX_CORES}, got {cores!r}")
    if isinstance(memory, bool) or not isinstance(memory, int) or not 0 <= memory <= MAX_MEMORY_MIB:
        raise ValueError(f"memory must be a whole number of MiB 0..{MAX_MEMORY_MIB}, got {memory!r}")
    return [(EXT_RESOURCES, struct.pack(">II", cores, memory))]


def disk_ext(disk=None):
    """The DISK field (docs/protocol.md): the scratch space a task needs in MiB where it runs; left
    out when not stated (None or 0)."""
    if disk is None:
        return []
    if isinstance(disk, bool) or not isinstance(disk, int) or not 0 <= disk <= MAX_DISK_MIB:
        raise ValueError(f"disk must be a whole number of MiB 0..{MAX_DISK_MIB}, got {disk!r}")
    return [(EXT_DISK, struct.pack(">I", disk))] if disk else []


MAX_NAMED_RESOURCES = 16
MAX_RESOURCE_AMOUNT = 1_000_000
_RESOURCE_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")


def resource_name_problem(name):
    """Why ``name`` cannot name a resource, or None: the rule of the Java NamedResources and the C
    executor's resources.c ([a-z][a-z0-9_]*, at most 32 characters, not cores, memory or disk)."""
    if not isinstance(name, str) or not _RESOURCE_NAME.fullmatch(name):
        return f"resource name {name!r} is not of the form [a-z][a-z0-9_]* (at most 32 characters)"
    if name in ("cores", "memory", "disk"):
        return f"{name!r} is not a named resource (state it as the task's {name})"
    return None


def named_resources_ext(gpus=None, resources=None):
    """The NAMED_RESOURCES field (docs/protocol.md): GPUs and other named resources a task needs of one
    executor, names sorted, each once; left out when none are stated (amounts of 0 are dropped)."""
    if gpus is None and not resources:
        return []  # every task that states none: nothing to check or build
    wanted = dict(resources or {})
    if gpus is not None:
        if "gpus" in wanted:
            raise ValueError("gpus is given twice (as gpus= and in resources)")
        wanted["gpus"] = gpus
    items = []
    for name in sorted(wanted):
        amount = wanted[name]
        problem = resource_name_problem(name)
        if problem:
            raise ValueError(problem)
        if isinstance(amount, bool) or not isinstance(amount, int) or not 0 <= amount <= MAX_RESOURCE_AMOUNT:
            raise ValueError(f"resource {name} must be a whole number 0..{MAX_RESOURCE_AMOUNT}, got {amount!r}")
        if amount:
            items.append((name, amount))
    if not items:
        return []
    if len(items) > MAX_NAMED_RESOURCES:
        raise ValueError(f"at most {MAX_NAMED_RESOURCES} named resources, got {len(items)}")
    body = struct.pack(">H", len(items)) + b"".join(
        struct.pack(">I", len(n)) + n.encode("ascii") + struct.pack(">I", a) for n, a in items)
    return [(EXT_NAMED_RESOURCES, body)]


def worker_ext(command=None, payload=b""):
    """The WORKER field (docs/protocol.md section 9): the task runs in a persistent worker running
    ``command`` (a list, ``command[0]`` the program), handed ``payload`` (bytes) with the task."""
    if command is None:
        if payload:
            raise ValueError("a payload is for a persistent worker: name its command")
        return []
    if isinstance(command, str) or not command or not all(isinstance(w, str) for w in command) or not command[0]:
        raise ValueError(f"a worker command is a non-empty list of strings with a program first, got {command!r}")
    if not isinstance(payload, (bytes, bytearray, memoryview)):
        raise ValueError(f"a worker payload is bytes, got {type(payload).__name__}")
    out = bytearray()
    _write(out, ("list", "str"), list(command))
    _write(out, "blob", bytes(payload))
    return [(EXT_WORKER, bytes(out))]


def _check_name(name, where):
    b = name.encode("utf-8") if isinstance(name, str) else b""
    if not isinstance(name, str) or not name or len(b) > MAX_NAME_BYTES or any(ord(c) < 32 or 127 <= ord(c) < 160
                                                                                 for c in name):
        raise ValueError(f"{where}: a task name is 1..{MAX_NAME_BYTES} bytes without control characters, got {name!r}")
    return b


def workflow_ext(name=None, after=()):
    """The NAME and AFTER fields of a task of a workflow (docs/workflows.md): its name in the instance, and
    the names of tasks of the instance that must succeed first (submitted before it)."""
    ext = []
    if name is not None:
        ext.append((EXT_NAME, _check_name(name, "name")))
    after = list(after or ())
    if after:
        parts = [_U16.pack(len(after))]
        for a in after:
            b = _check_name(a, "after")
            parts += (_U32.pack(len(b)), b)
        ext.append((EXT_AFTER, b"".join(parts)))
    return ext


def dependency_of(execution):
    """``(producer clientTaskId, what)`` of a DEPENDENCY_FAILED result, or None."""
    for tag, val in execution.get("ext", ()):
        if tag == EXT_DEPENDENCY:
            (producer,) = struct.unpack_from(">Q", val, 0)
            (n,) = _U32.unpack_from(val, 8)
            return producer, val[12:12 + n].decode("utf-8")
    return None


def task_spec(argv, env=None, work_dir="", wall_time_millis=0, retries=None):
    """A ``TaskSpec`` dict; ``retries``, when given, is the task's re-dispatch limit (tag RETRIES)."""
    env = dict(env or {})
    check_task(argv, env, retries)
    return {"argv": list(argv), "env": env, "workDir": work_dir, "wallTimeMillis": int(wall_time_millis),
            "ext": retries_ext(retries)}


_DELIVERED_HEAD = struct.Struct(">QQI")      # clientTaskId seq attempt
_DELIVERED_TIMES = struct.Struct(">qqqBiBqq")  # submitted dispatched completed; status exitCode flags started finished


def decode_deliver(body):
    """A DELIVER body as ``(instanceId, [DeliveredResult dict, ...])``: what :func:`decode_body` gives,
    without its generic walk (results are the client's hot path). Same checks, same errors."""
    try:
        instance_id, count = struct.unpack_from(">QI", body, 0)
        pos = 12
        if count > len(body) - pos:
            raise ProtocolError(f"DELIVER.results: count {count} exceeds the frame")
        results = []
        for i in range(count):
            task, seq, attempt = _DELIVERED_HEAD.unpack_from(body, pos)
            pos += _DELIVERED_HEAD.size
            executor, pos = _blob(body, pos, f"DELIVER.results[{i}].executorId")
            (sub, disp, comp, status, code, flags, started, finished) = _DELIVERED_TIMES.unpack_from(body, pos)
            pos += _DELIVERED_TIMES.size
            out, pos = _blob(body, pos, f"DELIVER.results[{i}].execution.stdout")
            err, pos = _blob(body, pos, f"DELIVER.results[{i}].execution.stderr")
            detail, pos = _blob(body, pos, f"DELIVER.results[{i}].execution.detail")
            (n_ext,) = _U16.unpack_from(body, pos)
            pos += 2
            ext = []
            for _ in range(n_ext):
                (tag,) = _U16.unpack_from(body, pos)
                val, pos = _blob(body, pos + 2, f"DELIVER.results[{i}].execution.ext")
                ext.append((tag, val))
            results.append({"clientTaskId": task, "seq": seq, "attempt": attempt,
                            "executorId": executor.decode("utf-8", "replace"), "submittedMicros": sub,
                            "dispatchedMicros": disp, "completedMicros": comp,
                            "execution": {"status": status, "exitCode": code, "flags": flags,
                                          "startedMicros": started, "finishedMicros": finished, "stdout": out,
                                          "stderr": err, "detail": detail.decode("utf-8", "replace"), "ext": ext}})
    except struct.error:
        raise ProtocolError("DELIVER: truncated") from None
    if pos != len(body):
        raise ProtocolError(f"DELIVER: {len(body) - pos} trailing bytes")
    return instance_id, results


def _blob(body, pos, where):
    (n,) = _U32.unpack_from(body, pos)
    pos += 4
    if n > len(body) - pos:
        raise ProtocolError(f"{where}: truncated")
    return bytes(body[pos:pos + n]), pos + n


def encode(msg):
    """One complete frame (length prefix included) for ``msg``, a dict with ``"type"`` and its fields."""
    code = TYPE_OF[msg["type"]]
    out = bytearray(5)
    out[4] = code
    for name, kind in MESSAGES[code][1]:
        _write(out, kind, msg[name])
    _U32.pack_into(out, 0, len(out) - 4)
    return bytes(out)


def decode_body(code, body, generic=False):
    """The message in one frame's ``type`` byte and body (the bytes after it). ``DELIVER`` takes
    :func:`decode_deliver` unless ``generic``."""
    if code == 0x24 and not generic:
        instance_id, results = decode_deliver(body)
        return {"type": "DELIVER", "instanceId": instance_id, "results": results}
    if code not in MESSAGES:
        raise ProtocolError(f"unknown message type 0x{code:02X}")
    name, fields = MESSAGES[code]
    r = _Reader(memoryview(body))
    msg = {"type": name}
    msg.update(_read_fields(r, fields, name))
    if r.pos != r.end:
        raise ProtocolError(f"{name}: {r.end - r.pos} trailing bytes")
    return msg


def decode(frame, max_frame_length=DEFAULT_MAX_FRAME_LENGTH, generic=False):
    """The message in one complete frame (length prefix included)."""
    if len(frame) < 5:
        raise ProtocolError("frame: truncated")
    length = _U32.unpack_from(frame, 0)[0]
    if length < 1 or length > max_frame_length:
        raise ProtocolError(f"frame length {length} outside 1..{max_frame_length}")
    if length != len(frame) - 4:
        raise ProtocolError(f"frame length {length} but {len(frame) - 4} bytes follow it")
    return decode_body(frame[4], frame[5:], generic)


# --- the golden vectors' text form (section 9) ---

def _quote(b):
    out = ['"']
    for c in b:
        ch = chr(c)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif 0x20 <= c <= 0x7E:
            out.append(ch)
        else:
            out.append(f"\\x{c:02x}")
    out.append('"')
    return "".join(out)


def _dump(lines, path, kind, v):
    if kind in _FIXED:
        lines.append(f"{path} = {v}")
    elif kind == "str":
        lines.append(f"{path} = {_quote(v.encode('utf-8'))}")
    elif kind == "blob":
        lines.append(f"{path} = {_quote(v)}")
    elif kind == "map":
        lines.append(f"{path}.count = {len(v)}")
        for i, (k, val) in enumerate(v.items()):
            _dump(lines, f"{path}[{i}].key", "str", k)
            _dump(lines, f"{path}[{i}].value", "str", val)
    elif kind == "ext":
        lines.append(f"{path}.count = {len(v)}")
        for i, (tag, val) in enumerate(v):
            lines.append(f"{path}[{i}].tag = {tag}")
            _dump(lines, f"{path}[{i}].value", "blob", val)
    elif kind == "spec":
        _dump(lines, path, ("struct", TASK_SPEC), v)
    elif kind[0] == "list":
        lines.append(f"{path}.count = {len(v)}")
        for i, e in enumerate(v):
            _dump(lines, f"{path}[{i}]", kind[1], e)
    else:
        for name, k in kind[1]:
            _dump(lines, f"{path}.{name}" if path else name, k, v[name])


def dump(msg):
    """The ``path = value`` lines of a golden vector's ``.txt`` file for ``msg`` (comments excluded)."""
    lines = [f"type = {msg['type']}"]
    _dump(lines, "", ("struct", MESSAGES[TYPE_OF[msg["type"]]][1]), msg)
    return lines
