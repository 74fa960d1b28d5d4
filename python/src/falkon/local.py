"""A dispatcher and executors on this machine, started through the ``falkon`` command.

What ``falkon run`` embeds, for Python programs and tests: a dispatcher on loopback with a fresh
random token (handed to the executors in their environment, never on a command line) and N local
executor processes. The ``falkon`` command is ``$FALKON_BIN``, else ``falkon`` on the ``PATH``.
"""

import os
import re
import secrets
import shutil
import subprocess
import threading

_LISTENING = re.compile(r"falkon dispatcher listening on \S+:(\d+)")


def falkon_command(explicit=None):
    """The ``falkon`` launcher: ``explicit``, ``$FALKON_BIN``, or ``falkon`` on the PATH."""
    cmd = explicit or os.environ.get("FALKON_BIN") or shutil.which("falkon")
    if not cmd or not os.access(cmd, os.X_OK):
        raise FileNotFoundError("the falkon command was not found: set FALKON_BIN to bin/falkon of a built "
                                "Falkon checkout, or put it on the PATH")
    return cmd


class LocalDispatcher:
    """``falkon dispatcher`` on 127.0.0.1 (a free port) plus ``executors`` local executors.

    :param executors: executor processes to start
    :param slots: tasks each runs at once (default: the executor's, one per core)
    :param impl: ``java`` or ``c`` (default: ``c`` when the C executor is built beside the ``falkon``
        command, as ``falkon run`` chooses, else ``java``)
    :param extra_dispatcher_args: more options for ``falkon dispatcher``
    :param token: the token to require (default: a fresh random one)
    :param host: the address it listens on: loopback by default; ``0.0.0.0`` when executors on other
        nodes must reach it (a provisioner's)
    """

    def __init__(self, executors=1, slots=None, impl=None, falkon=None, extra_dispatcher_args=(),
                 extra_executor_args=(), log_dir=None, startup_timeout=60.0, token=None, host="127.0.0.1"):
        self.command = falkon_command(falkon)
        self.token = token or secrets.token_hex(32)
        self.env = dict(os.environ, FALKON_TOKEN=self.token)
        self.env.pop("FALKON_TOKEN_FILE", None)
        self.log_dir = log_dir
        self.executors = []
        self._logs = []
        # its standard input is a pipe only this process holds open (not inherited by the processes
        # it starts): when this process ends, however it ends, the dispatcher sees the pipe's end and
        # stops, and its executors with it (--stop-with-stdin); stop() is the orderly way
        self.dispatcher = subprocess.Popen(
            [self.command, "dispatcher", "--host", host, "--port", "0", "--stop-with-stdin", *extra_dispatcher_args],
            env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log("dispatcher"), text=True)
        self.port = self._await_port(startup_timeout)
        # local executors dial loopback whatever the listening address
        self.address = f"127.0.0.1:{self.port}"
        # the rest of its standard output is drained so that it never blocks on a full pipe
        threading.Thread(target=self.dispatcher.stdout.read, daemon=True).start()
        for i in range(executors):
            self.start_executor(slots, impl, extra_executor_args, name=f"executor-{i}")

    def _log(self, name):
        if self.log_dir is None:
            return subprocess.DEVNULL
        os.makedirs(self.log_dir, exist_ok=True)
        f = open(os.path.join(self.log_dir, name + ".log"), "ab")
        self._logs.append(f)
        return f

    def _await_port(self, timeout):
        found = []

        def scan():
            for line in self.dispatcher.stdout:
                m = _LISTENING.search(line)
                if m:
                    found.append(int(m.group(1)))
                    return

        t = threading.Thread(target=scan, daemon=True)
        t.start()
        t.join(timeout)
        if not found:
            self.stop()
            raise RuntimeError(f"falkon dispatcher did not start listening within {timeout:.0f} s "
                               f"(exit status {self.dispatcher.poll()})")
        return found[0]

    def start_executor(self, slots=None, impl=None, extra_args=(), name=None):
        """Starts one more executor pointed at this dispatcher; returns its process."""
        args = [self.command, "executor", "--dispatcher", self.address]
        if slots:
            args += ["--slots", str(slots)]
        impl = impl or self.default_impl()
        if impl != "java":
            args += ["--impl", impl]
        if not any(a == "--reconnect-for" or a.startswith("--reconnect-for=") for a in extra_args):
            # the dispatcher is this object's own: once it is gone (stopped, or this process ended)
            # nothing will listen there again, and an executor that missed its goodbye (one still
            # connecting) would dial for the default ten minutes
            args += ["--reconnect-for", "0"]
        args += list(extra_args)
        p = subprocess.Popen(args, env=self.env, stdout=subprocess.DEVNULL,
                             stderr=self._log(name or f"executor-{len(self.executors)}"))
        self.executors.append(p)
        return p

    def default_impl(self):
        launcher = os.path.realpath(self.command)
        c = os.path.join(os.path.dirname(os.path.dirname(launcher)), "executor-c", "target", "build",
                         "falkon-executor-c")
        return "c" if os.access(c, os.X_OK) else "java"

    def stop(self):
        """Stops the executors and the dispatcher (TERM, then KILL after 10 s)."""
        for p in self.executors + [self.dispatcher]:
            if p.poll() is None:
                p.terminate()
        for p in self.executors + [self.dispatcher]:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for f in self._logs:
            f.close()
        for stream in (self.dispatcher.stdin, self.dispatcher.stdout):
            if stream:
                stream.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False
