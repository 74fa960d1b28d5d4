"""Where a workflow's tasks run: a dispatcher this process connects to, or one it starts (with local
executors, as ``falkon run`` does, or with none and ``falkon provision`` getting executors from a
batch scheduler). Owns the processes it starts and stops them in :meth:`Backend.close`."""

import os
import shlex
import socket
import subprocess
import threading

from falkon import Client, FalkonError, LocalDispatcher
from falkon.local import falkon_command


class Backend:
    """The dispatcher, the client connected to it and the workflow's instance on it.

    :param settings: the plugin's ``ExecutorSettings``
    :param log_dir: where the processes started here write their logs
    :param on_failure: called with a message if ``falkon provision`` ends while the workflow runs
    """

    def __init__(self, settings, log_dir, on_failure=None):
        self.local = None
        self.provision = None
        self._closing = False
        self._logs = []
        try:
            self._start(settings, log_dir, on_failure)
        except BaseException:
            self.close()
            raise

    def _start(self, settings, log_dir, on_failure):
        lrm = settings.provisioner
        if settings.dispatcher:
            address, token = settings.dispatcher, None
            # the dispatcher's executors are not known here: a task states the cores it needs
            self.max_cores = None
        else:
            # executors from a batch scheduler dial this host from their nodes (the local
            # provisioner's run here): all interfaces then, loopback otherwise
            remote_nodes = lrm is not None and lrm != "local"
            self.local = LocalDispatcher(executors=0 if lrm else settings.executors, slots=settings.slots,
                                         impl=settings.impl, falkon=settings.bin, log_dir=log_dir,
                                         host="0.0.0.0" if remote_nodes else "127.0.0.1")
            address, token = self.local.address, self.local.token
            # a task wider than every executor would never start: threads are capped at the slots,
            # as snakemake --cores caps them
            self.max_cores = settings.slots or (None if lrm else os.cpu_count())
        if lrm:
            self._provision(settings, address, log_dir, on_failure)
        self.client = Client(address, token=token, token_file=settings.token_file, tls_ca=settings.tls_ca,
                             client_name="snakemake")
        self.instance = self.client.create_instance("snakemake")

    def _provision(self, settings, address, log_dir, on_failure):
        host, _, port = address.rpartition(":")
        if self.local is not None and settings.provisioner != "local":
            host = socket.gethostname()  # what the nodes can reach; the dispatcher listens on all interfaces
        # --stop-with-stdin: its input is a pipe only this process holds, so that a Snakemake killed
        # outright still has its allocations given back (the provisioner stops as on SIGTERM)
        cmd = [falkon_command(settings.bin), "provision", "--stop-with-stdin", "--dispatcher", f"{host}:{port}",
               "--provisioner", settings.provisioner, "--max-nodes", str(settings.max_nodes),
               "--idle", str(settings.idle)]
        if settings.slots:
            cmd += ["--slots", str(settings.slots)]
        if settings.impl:
            cmd += ["--executor", settings.impl]
        if self.local is None:
            # a running dispatcher: the provisioner reaches it as this client does
            if settings.token_file:
                cmd += ["--token-file", settings.token_file]
            if settings.tls_ca:
                cmd += ["--tls-ca", settings.tls_ca]
        cmd += shlex.split(settings.provision_args or "")
        env = self.local.env if self.local is not None else dict(os.environ)
        os.makedirs(log_dir, exist_ok=True)
        log = open(os.path.join(log_dir, "provision.log"), "ab")
        self._logs.append(log)
        self.provision = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=log, stderr=log)

        def watch():
            code = self.provision.wait()
            if not self._closing and on_failure is not None:
                on_failure(f"falkon provision ended (exit status {code}) while the workflow ran; "
                           f"its log: {log.name}")
        threading.Thread(target=watch, name="falkon-provision-watch", daemon=True).start()

    def cancel(self):
        """Cancels every task of the workflow not yet finished (queued or running); returns how many."""
        try:
            return self.instance.destroy()
        except (FalkonError, AttributeError):
            return 0

    def close(self):
        """Ends the instance, the connection and every process started here (TERM, then KILL)."""
        self._closing = True
        self.cancel()
        client = getattr(self, "client", None)
        if client is not None:
            client.close()
        if self.provision is not None:
            # the provisioner gives its allocations back to the batch scheduler on TERM
            self.provision.terminate()
            try:
                self.provision.wait(60)
            except subprocess.TimeoutExpired:
                self.provision.kill()
                self.provision.wait()
            self.provision.stdin.close()
        if self.local is not None:
            self.local.stop()
        for f in self._logs:
            f.close()
