"""Writing a persistent worker in Python (docs/protocol.md section 9).

An executor starts a worker's command once per slot and hands it one task after another on its
standard input; each answer goes back on its standard output. :func:`serve` speaks that framing:
it calls ``handle(request)`` for each task and writes back what it returns. Before serving it moves
the framing off file descriptors 0 and 1, so that ``print`` in a task goes to the worker's standard
error (the executor's log) and cannot corrupt the stream::

    from falkon import resident

    def handle(req):
        return 0, ("hello " + req.argv[0]).encode(), b""

    resident.serve(handle)

A task's ``env`` is applied around the call and its ``work_dir`` made the current directory.
``handle`` may raise: the task then ends with exit code 1 and the traceback as its stderr, and the
worker serves the next task. The worker leaves when its input ends (the executor closes it).
"""

import os
import struct
import sys
import traceback
from collections import namedtuple

from . import wire

Request = namedtuple("Request", "task_id max_output argv env work_dir payload")
_LEN = struct.Struct(">I")
MAX_FRAME = wire.DEFAULT_MAX_FRAME_LENGTH


def decode_request(body):
    """A request body (after its length prefix) as a :class:`Request`; ``wire.ProtocolError`` names
    what is wrong."""
    r = wire._Reader(body)
    fields = [wire._read(r, kind, name) for name, kind in
              (("taskId", "u64"), ("maxOutput", "u32"), ("argv", ("list", "str")), ("env", "map"),
               ("workDir", "str"), ("payload", "blob"))]
    if r.pos != r.end:
        raise wire.ProtocolError(f"worker request: {r.end - r.pos} trailing bytes")
    return Request(*fields)


def encode_request(req):
    out = bytearray(_LEN.size)
    for kind, v in (("u64", req.task_id), ("u32", req.max_output), (("list", "str"), req.argv),
                    ("map", dict(sorted(req.env.items()))), ("str", req.work_dir), ("blob", req.payload)):
        wire._write(out, kind, v)
    _LEN.pack_into(out, 0, len(out) - _LEN.size)
    return bytes(out)


def encode_response(task_id, exit_code, stdout=b"", stderr=b""):
    out = bytearray(_LEN.size)
    wire._write(out, "u64", task_id)
    out += struct.pack(">i", exit_code)
    wire._write(out, "blob", bytes(stdout))
    wire._write(out, "blob", bytes(stderr))
    _LEN.pack_into(out, 0, len(out) - _LEN.size)
    return bytes(out)


def decode_response(body):
    r = wire._Reader(body)
    task_id = r.fixed("u64", "taskId")
    exit_code = struct.unpack(">i", bytes(r.take(4, "exitCode")))[0]
    stdout = wire._read(r, "blob", "stdout")
    stderr = wire._read(r, "blob", "stderr")
    if r.pos != r.end:
        raise wire.ProtocolError(f"worker response: {r.end - r.pos} trailing bytes")
    return task_id, exit_code, stdout, stderr


def _read_exact(fd, n):
    parts = []
    while n:
        b = os.read(fd, min(n, 1 << 20))
        if not b:
            return None
        parts.append(b)
        n -= len(b)
    return b"".join(parts)


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _apply(env):
    """Sets ``env``; returns what restores the previous values."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    return saved


def _restore(saved):
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def serve(handle, stdin=0, stdout=1):
    """Serves tasks until the executor closes the worker's input. ``handle(request)`` returns
    ``(exit_code, stdout_bytes, stderr_bytes)``."""
    fd_in, fd_out = os.dup(stdin), os.dup(stdout)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, stdin)
    os.close(null)
    sys.stdout.flush()
    os.dup2(2, stdout)  # a task's print goes to stderr, not into the framing
    home = os.getcwd()
    while True:
        head = _read_exact(fd_in, _LEN.size)
        if head is None:
            return
        n = _LEN.unpack(head)[0]
        if n > MAX_FRAME:
            print(f"falkon worker: a request of {n} bytes is over {MAX_FRAME}", file=sys.stderr)
            sys.exit(2)
        body = _read_exact(fd_in, n)
        if body is None:
            return
        req = decode_request(body)
        saved = _apply(req.env)
        try:
            os.chdir(req.work_dir or home)
            code, out, err = handle(req)
        except Exception:
            code, out, err = 1, b"", traceback.format_exc().encode("utf-8", "replace")
        finally:
            _restore(saved)
            sys.stdout.flush()
            sys.stderr.flush()
        # one byte over the cap is enough for the executor to flag the output truncated
        _write_all(fd_out, encode_response(req.task_id, code, out[:req.max_output + 1], err[:req.max_output + 1]))
