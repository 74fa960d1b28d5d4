"""One python_app call as a Falkon task: ``python -S _pyrun.py [--socket SOCKET] IN OUT``.

Started without ``site`` and importing only the standard library, so it costs a few milliseconds:
it hands its standard streams, working directory and environment to this node's zygote
(``falkon.parsl.worker serve``), starting the zygote when none runs, and exits with the status of
the child the zygote forked for it. Without a usable zygote it runs the call itself.
"""

import array
import os
import sys
import zlib

# the C module itself: "socket" would import enum and selectors, tripling this script's start-up
import _socket

HERE = os.path.dirname(os.path.abspath(__file__))


def socket_path(python=None, uid=None):
    """Where the zygote of this interpreter and this Falkon installation listens, for this user:
    ``/tmp/falkon-parsl-UID/zygote-HASH.sock`` (``$FALKON_PARSL_RUNTIME_DIR`` instead of /tmp)."""
    base = os.path.join(os.environ.get("FALKON_PARSL_RUNTIME_DIR") or "/tmp",
                        f"falkon-parsl-{os.getuid() if uid is None else uid}")
    key = "\0".join([os.path.realpath(python or sys.executable), HERE])
    return os.path.join(base, f"zygote-{zlib.crc32(key.encode()):08x}.sock")


def private_dir(path):
    """Creates the socket's directory (mode 0700) if needed; True iff it is this user's alone: never
    talk to a socket someone else could have put there."""
    base = os.path.dirname(path)
    try:
        os.mkdir(base, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    st = os.lstat(base)
    return os.path.isdir(base) and not os.path.islink(base) and st.st_uid == os.getuid() and not st.st_mode & 0o077


def connect(path):
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.connect(path)
        return s
    except OSError:
        s.close()
        return None


def start_zygote(path):
    """Starts the zygote under a lock (one per node), waiting until it accepts; its socket or None."""
    import fcntl  # only the first task on a node gets here: the common path imports nothing more
    import subprocess
    import time

    with open(path + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        s = connect(path)
        if s is not None:
            return s
        log = open(path + ".log", "ab")
        subprocess.Popen([sys.executable, "-m", "falkon.parsl.worker", "serve", path], stdin=subprocess.DEVNULL,
                         stdout=log, stderr=log, start_new_session=True, close_fds=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                             p for p in (os.path.dirname(os.path.dirname(HERE)), os.environ.get("PYTHONPATH")) if p)))
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            s = connect(path)
            if s is not None:
                return s
            time.sleep(0.02)
        return None


def main(infile, outfile, path=None):
    path = path or socket_path()
    s = None
    if private_dir(path):
        s = connect(path) or start_zygote(path)
    if s is None:
        os.execv(sys.executable, [sys.executable, "-m", "falkon.parsl.worker", "run", infile, outfile])
    # the request: NUL-separated input, output, working directory, then the environment as K=V
    fields = [infile, outfile, os.getcwd()] + [f"{k}={v}" for k, v in os.environ.items()]
    request = "\0".join(fields).encode("utf-8", "surrogateescape")
    s.sendmsg([len(request).to_bytes(4, "big")],
              [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
    s.sendall(request)
    reply = b""
    while not reply.endswith(b"\n"):
        chunk = s.recv(64)
        if not chunk:
            print("falkon: the Python worker zygote went away while running this task", file=sys.stderr)
            return 70
        reply += chunk
    code = int(reply)
    if code < 0:  # the child died of a signal: so does this process, for the executor to report it
        os.kill(os.getpid(), -code)
        return 128 - code
    return code


if __name__ == "__main__":
    args = sys.argv[1:]
    sock = None
    if len(args) == 4 and args[0] == "--socket":
        sock, args = args[1], args[2:]
    if len(args) != 2:
        print("usage: python -S _pyrun.py [--socket SOCKET] IN OUT", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(args[0], args[1], sock))
