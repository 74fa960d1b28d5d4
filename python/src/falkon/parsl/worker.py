"""Runs ``python_app`` calls on an executor node.

``python -m falkon.parsl.worker run IN OUT`` runs one call: it reads the function and its
arguments (serialised by Parsl's ``pack_apply_message``) from IN, runs it, and writes the result
or the exception (``RemoteExceptionWrapper``, as Parsl's own workers do) to OUT, atomically.

Starting Python and importing Parsl for every task would cost most of a second of CPU, so by
default each task runs a launcher (``falkon-pyrun``, built with the C executor, or ``_pyrun.py``
started with ``python -S``) that hands the task's standard streams, working directory and
environment to this node's *zygote*: ``python -m falkon.parsl.worker serve SOCKET``. The zygote
keeps a pool of Python workers, forked from it with Parsl already imported, and gives each call
to an idle one (forking another when all are busy), as HTEX keeps its workers between calls.
A worker runs the call with the task's streams, directory and environment, then puts its own
back. When Falkon kills a task (wall time, cancel), its launcher's connection closes and the
zygote kills the worker running it; a worker that dies (``os._exit``, a signal) is reported
with its exit status. Idle workers leave after a minute, the zygote after five idle minutes.
"""

import os
import select
import signal
import socket
import struct
import sys
import time

IDLE_EXIT_SECONDS = 300
WORKER_IDLE_SECONDS = 60
_LEN = struct.Struct(">I")


def run(infile, outfile):
    """Runs the call in ``infile``; writes its outcome to ``outfile``. Returns the exit status (0)."""
    from parsl.app.errors import RemoteExceptionWrapper
    from parsl.executors.execute_task import execute_task
    from ._serial import serialize_data as serialize

    with open(infile, "rb") as f:
        bufs = f.read()
    try:
        payload = serialize(execute_task(bufs))
    except Exception:
        payload = serialize(RemoteExceptionWrapper(*sys.exc_info()))
    sys.stdout.flush()
    sys.stderr.flush()
    _write_result(outfile, payload)
    return 0


def _write_result(outfile, payload):
    tmp = f"{outfile}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(payload)
    os.replace(tmp, outfile)


def resident():
    """``python -m falkon.parsl.worker resident``: a persistent worker (docs/protocol.md section 9)
    for python_app calls, started once per executor slot. A task's payload is the call as Parsl's
    ``pack_apply_message`` made it (or, when it was too large to travel with the task, the file
    ``argv[2]`` holds it); the serialised result or exception goes back as the task's stdout when it
    fits the executor's output cap, else into the file ``argv[3]`` (stdout empty)."""
    from parsl.app.errors import RemoteExceptionWrapper
    from parsl.executors.execute_task import execute_task
    from ._serial import serialize_data as serialize

    from .. import resident as framing

    def handle(req):
        bufs = req.payload
        if not bufs:
            with open(req.argv[2], "rb") as f:
                bufs = f.read()
        try:
            payload = serialize(execute_task(bufs))
        except Exception:
            payload = serialize(RemoteExceptionWrapper(*sys.exc_info()))
        if len(payload) <= req.max_output:
            return 0, payload, b""
        _write_result(req.argv[3], payload)
        return 0, b"", b""

    framing.serve(handle)


def _recv_exact(conn, n):
    data = bytearray()
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError("request truncated")
        data += chunk
    return bytes(data)


def _recv_request(conn):
    """A launcher's request: 4-byte length (carrying the task's fds 0, 1, 2) then the NUL-separated
    input, output, working directory and K=V environment entries. ``(raw, fds)``."""
    hdr, fds, _, _ = socket.recv_fds(conn, _LEN.size, 3)
    if len(hdr) < _LEN.size:
        hdr += _recv_exact(conn, _LEN.size - len(hdr))
    return _recv_exact(conn, _LEN.unpack(hdr)[0]), fds


def _parse_request(data):
    fields = data.decode("utf-8", "surrogateescape").split("\0")
    if len(fields) < 3:
        raise ValueError("request has fewer than three fields")
    env = dict(e.split("=", 1) for e in fields[3:] if "=" in e)
    return {"in": fields[0], "out": fields[1], "cwd": fields[2], "env": env}


# --- a worker: a process forked from the zygote, running one call after another ---

def _worker_loop(ctl):
    """Serves calls sent over ``ctl`` until it closes; never returns."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.set_wakeup_fd(-1)
    own_fds = [os.dup(0), os.dup(1), os.dup(2)]
    own_env = dict(os.environ)
    own_cwd = os.getcwd()
    own_path = list(sys.path)
    while True:
        try:
            raw, fds = _recv_request(ctl)
        except (EOFError, OSError):
            os._exit(0)
        code = 1
        try:
            request = _parse_request(raw)
            for target, fd in zip((0, 1, 2), fds):
                os.dup2(fd, target)
            os.chdir(request["cwd"])
            os.environ.clear()
            os.environ.update(request["env"])
            # the task's PYTHONPATH, as a fresh interpreter would have it (workers outlive tasks)
            extra = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p and p not in sys.path]
            sys.path[:0] = extra
            code = run(request["in"], request["out"])
        except SystemExit as e:  # the call asked to exit: its status, as if it had been a process
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:
            import traceback
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            for target, fd in zip((0, 1, 2), own_fds):
                os.dup2(fd, target)
            for fd in fds:
                os.close(fd)
            os.environ.clear()
            os.environ.update(own_env)
            os.chdir(own_cwd)
            sys.path[:] = own_path
        try:
            ctl.sendall(f"{code}\n".encode())
        except OSError:
            os._exit(0)


class _Worker:
    __slots__ = ("pid", "ctl", "task", "idle_since")

    def __init__(self, pid, ctl):
        self.pid = pid
        self.ctl = ctl
        self.task = None  # the launcher's connection while running its call
        self.idle_since = time.monotonic()


class _Zygote:
    def __init__(self, path):
        self.path = path
        self.workers = {}   # pid -> _Worker
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if os.path.exists(path):
            os.unlink(path)  # a dead zygote's socket; the launcher holds the start-up lock
        old_umask = os.umask(0o077)
        try:
            self.listener.bind(path)
        finally:
            os.umask(old_umask)
        self.listener.listen(128)
        self.inode = os.stat(path).st_ino
        self.wake_r, wake_w = socket.socketpair()
        wake_w.setblocking(False)
        self._wake_w = wake_w
        signal.set_wakeup_fd(wake_w.fileno())
        signal.signal(signal.SIGCHLD, lambda *_: None)

    def spawn(self, pending_fds=()):
        """A new worker; ``pending_fds`` (a request's streams the zygote holds) are closed in it, or
        it would keep them open, and its launcher's reader waiting, for as long as it lives."""
        here, there = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            for fd in pending_fds:
                os.close(fd)
            here.close()
            self.listener.close()
            self.wake_r.close()
            self._wake_w.close()
            for w in self.workers.values():
                w.ctl.close()
                if w.task is not None:
                    w.task.close()
            _worker_loop(there)
        there.close()
        w = _Worker(pid, here)
        self.workers[pid] = w
        return w

    def accept(self):
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        try:
            conn.settimeout(10)
            raw, fds = _recv_request(conn)
            conn.settimeout(None)
        except (OSError, EOFError, struct.error):
            conn.close()
            return
        idle = [w for w in self.workers.values() if w.task is None]
        w = max(idle, key=lambda x: x.idle_since) if idle else self.spawn(fds)  # the warmest idle worker
        try:
            socket.send_fds(w.ctl, [_LEN.pack(len(raw))], fds)
            w.ctl.sendall(raw)
            w.task = conn
        except OSError:
            conn.close()
            self.kill(w)
        finally:
            for fd in fds:
                os.close(fd)

    def answered(self, w):
        try:
            reply = w.ctl.recv(64)
        except OSError:
            reply = b""
        if not reply:  # the worker died: reaping reports its status
            return
        self.finish(w, reply)
        w.idle_since = time.monotonic()

    def finish(self, w, reply):
        if w.task is not None:
            try:
                w.task.sendall(reply)
            except OSError:
                pass
            w.task.close()
            w.task = None

    def kill(self, w):
        """Kills a worker whose launcher is gone; it is never handed another call."""
        self.workers.pop(w.pid, None)
        try:
            os.kill(w.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        w.ctl.close()
        if w.task is not None:
            w.task.close()
            w.task = None

    def reap(self):
        while self.workers:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            w = self.workers.pop(pid, None)
            if w is not None:
                self.finish(w, f"{os.waitstatus_to_exitcode(status)}\n".encode())
                w.ctl.close()

    def retire_idle(self, now):
        for w in list(self.workers.values()):
            if w.task is None and now - w.idle_since > WORKER_IDLE_SECONDS:
                w.ctl.close()  # it exits when its control socket closes
                del self.workers[w.pid]

    def socket_is_ours(self):
        try:
            return os.stat(self.path).st_ino == self.inode
        except FileNotFoundError:
            return False

    def serve(self, idle_seconds):
        idle_since = time.monotonic()
        while True:
            watched = [self.listener, self.wake_r]
            for w in self.workers.values():
                watched.append(w.ctl)
                if w.task is not None:
                    watched.append(w.task)
            ready, _, _ = select.select(watched, [], [], 5.0)
            now = time.monotonic()
            if self.wake_r in ready:
                self.wake_r.recv(4096)
            for w in list(self.workers.values()):
                if w.ctl in ready:
                    self.answered(w)
                elif w.task is not None and w.task in ready:
                    self.kill(w)  # the launcher is gone (killed for its wall time, or cancelled)
            self.reap()
            if self.listener in ready:
                self.accept()
                idle_since = now
            if any(w.task is not None for w in self.workers.values()):
                idle_since = now
            self.retire_idle(now)
            if now - idle_since > idle_seconds or not self.socket_is_ours():
                break
        self.listener.close()
        for w in list(self.workers.values()):
            self.kill(w)
        if self.socket_is_ours():
            os.unlink(self.path)


def serve(path, idle_seconds=IDLE_EXIT_SECONDS):
    """The zygote: accepts launchers' requests on the Unix socket ``path`` and runs each call in a
    pooled worker."""
    # what every call needs, imported once here instead of in every worker
    import parsl.app.errors  # noqa: F401
    import parsl.executors.execute_task  # noqa: F401
    import parsl.serialize  # noqa: F401
    import gc
    gc.freeze()  # what is loaded now stays out of the collector's way: workers do not copy its pages
    _Zygote(path).serve(idle_seconds)


def main(argv):
    if len(argv) == 3 and argv[0] == "run":
        return run(argv[1], argv[2])
    if len(argv) == 2 and argv[0] == "serve":
        serve(argv[1])
        return 0
    if argv == ["resident"]:
        resident()
        return 0
    print("usage: python -m falkon.parsl.worker run IN OUT | serve SOCKET | resident", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
