"""Runs ``python_app`` calls on an executor node.

``python -m falkon.parsl.worker run IN OUT`` runs one call: it reads the function and its
arguments (serialised by Parsl's ``pack_apply_message``) from IN, runs it, and writes the result
or the exception (``RemoteExceptionWrapper``, as Parsl's own workers do) to OUT, atomically.

Starting Python and importing Parsl for every task would cost most of a second of CPU, so by
default each task runs ``_pyrun.py`` (a stdlib-only script started with ``python -S``) which asks
a per-node *zygote* — ``python -m falkon.parsl.worker serve SOCKET``, Parsl already imported — to
fork a child that runs the call with the task's standard streams, working directory and
environment. The child dies with the task: when Falkon kills the task (wall time, cancel), the
connection closes and the child exits. The zygote exits after five idle minutes.
"""

import os
import select
import signal
import socket
import struct
import sys
import threading

IDLE_EXIT_SECONDS = 300
_LEN = struct.Struct(">I")


def run(infile, outfile):
    """Runs the call in ``infile``; writes its outcome to ``outfile``. Returns the exit status (0)."""
    from parsl.app.errors import RemoteExceptionWrapper
    from parsl.executors.execute_task import execute_task
    from parsl.serialize import serialize

    with open(infile, "rb") as f:
        bufs = f.read()
    try:
        payload = serialize(execute_task(bufs))
    except Exception:
        payload = serialize(RemoteExceptionWrapper(*sys.exc_info()))
    sys.stdout.flush()
    sys.stderr.flush()
    tmp = f"{outfile}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(payload)
    os.replace(tmp, outfile)
    return 0


def _recv_exact(conn, n):
    data = bytearray()
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError("request truncated")
        data += chunk
    return bytes(data)


def _parse_request(data):
    """What ``_pyrun.py`` sends: NUL-separated input, output, working directory, then K=V entries."""
    fields = data.decode("utf-8", "surrogateescape").split("\0")
    if len(fields) < 3:
        raise ValueError("request has fewer than three fields")
    env = dict(e.split("=", 1) for e in fields[3:] if "=" in e)
    return {"in": fields[0], "out": fields[1], "cwd": fields[2], "env": env}


def _child(conn, fds, request):
    """In the forked child: become the task's process and run the call; never returns."""
    code = 1
    try:
        for target, fd in zip((0, 1, 2), fds):
            os.dup2(fd, target)
        for fd in fds:
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.set_wakeup_fd(-1)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])

        def watch():  # the task's process is gone (killed for its wall time, or cancelled): so is this
            try:
                while conn.recv(1):
                    pass
            except OSError:
                pass
            os._exit(137)

        threading.Thread(target=watch, daemon=True).start()
        code = run(request["in"], request["out"])
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def serve(path, idle_seconds=IDLE_EXIT_SECONDS):
    """The zygote: accepts requests on the Unix socket ``path`` and forks a child for each."""
    # what every call needs, imported once here instead of in every task
    import parsl.app.errors  # noqa: F401
    import parsl.executors.execute_task  # noqa: F401
    import parsl.serialize  # noqa: F401
    import gc
    gc.freeze()  # what is loaded now stays out of the collector's way: children do not copy its pages

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.path.exists(path):
        os.unlink(path)  # a dead zygote's socket; the caller holds the start-up lock
    old_umask = os.umask(0o077)
    try:
        listener.bind(path)
    finally:
        os.umask(old_umask)
    listener.listen(128)
    wake_r, wake_w = socket.socketpair()
    wake_w.setblocking(False)
    signal.set_wakeup_fd(wake_w.fileno())
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children = {}  # pid -> connection, to report the child's exit status on
    idle_since = _now()
    inode = os.stat(path).st_ino
    while True:
        ready, _, _ = select.select([listener, wake_r], [], [], 5.0)
        if wake_r in ready:
            wake_r.recv(4096)
        _reap(children)
        if listener in ready:
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            idle_since = _now()
            try:
                conn.settimeout(10)
                hdr, fds, _, _ = socket.recv_fds(conn, _LEN.size, 3)
                request = _parse_request(_recv_exact(conn, _LEN.unpack(hdr)[0]))
                conn.settimeout(None)
            except (OSError, ValueError, EOFError, struct.error):
                conn.close()
                continue
            pid = os.fork()
            if pid == 0:
                listener.close()
                wake_r.close()
                for other in children.values():
                    other.close()
                _child(conn, fds, request)
            for fd in fds:
                os.close(fd)
            children[pid] = conn
        if not children and _now() - idle_since > idle_seconds:
            break
        try:
            if os.stat(path).st_ino != inode:
                break  # another zygote took over the socket
        except FileNotFoundError:
            break
    listener.close()
    try:
        if os.stat(path).st_ino == inode:
            os.unlink(path)
    except FileNotFoundError:
        pass


def _reap(children):
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = children.pop(pid, None)
        if conn is not None:
            try:
                conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
            except OSError:
                pass
            conn.close()


def _now():
    import time
    return time.monotonic()


def main(argv):
    if len(argv) == 3 and argv[0] == "run":
        return run(argv[1], argv[2])
    if len(argv) == 2 and argv[0] == "serve":
        serve(argv[1])
        return 0
    print("usage: python -m falkon.parsl.worker run IN OUT | serve SOCKET", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
