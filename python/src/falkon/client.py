"""A client of the Falkon dispatcher over its TCP protocol (docs/protocol.md), standard library only.

One :class:`Client` is one connection, served by two threads: a reader (replies, ``DELIVER``
frames, reconnection) and a sender (bundles). Tasks submitted from any thread are queued and sent
in ``SUBMIT`` bundles of up to ``bundle_size``: while one bundle is on the wire the next fills up,
so a fast submitter gets large bundles without waiting. Each task's :class:`~concurrent.futures.Future`
completes exactly once with a :class:`Result`, or with :class:`FalkonError` when the task cannot
have run (its instance or the connection is gone for good).

If the connection breaks the client dials again with back-off for ``reconnect_for`` seconds, re-attaches
its instances with their secrets, sends again every bundle the dispatcher had not confirmed (a bundle
sent twice is queued once) and drops results it already has.

The parts: this module is the API (:class:`Client`, :class:`Instance`); :mod:`falkon._connection` the
connection (dialling, requests, the reader, reconnection); :mod:`falkon._bundling` the sending side
(bundles, the sender thread, the dispatcher's answers); :mod:`falkon.results` what a task comes back with.
"""

import collections
import itertools
import json
import logging
import re
import socket
import ssl
import threading
import time
from concurrent.futures import Future

from . import wire
from ._bundling import _Bundler
from ._connection import _Connection
from .results import ConnectionLost, FalkonError, Result, _Pending, _settle  # noqa: F401 (the API's names)
from .token import find_token

log = logging.getLogger("falkon.client")

DEFAULT_PORT = 50500


def parse_address(address):
    """``host:port``, ``[v6]:port`` or ``host`` (port 50500) as ``(host, port)``."""
    address = address.strip()
    if address.startswith("["):
        host, _, rest = address[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif address.count(":") == 1:
        host, _, port = address.partition(":")
    else:
        host, port = address, ""
    if not host:
        raise ValueError(f"dispatcher address {address!r} has no host")
    try:
        p = int(port) if port else DEFAULT_PORT
    except ValueError:
        raise ValueError(f"dispatcher address {address!r}: port {port!r} is not a number") from None
    if not 0 < p < 65536:
        raise ValueError(f"dispatcher address {address!r}: port {p} out of range")
    return host, p


class Instance:
    """An isolated instance on the dispatcher: tasks submitted here run on its executors and their
    results come back only here. Create one with :meth:`Client.create_instance`. Thread-safe."""

    def __init__(self, client, instance_id, secret, lease_seconds):
        self._client = client
        self.id = instance_id
        self.secret = secret
        self.lease_seconds = lease_seconds
        self._ids = itertools.count()
        self._unfinished = {}          # clientTaskId -> _Pending
        self._unconfirmed = {}         # requestId -> bundle (list of (id, spec)) sent, no SUBMITTED yet
        self._lost = None
        self._destroyed = False
        self._acked = 0                # the highest result seq acknowledged to the dispatcher
        self._ack_wanted = 0           # the highest received (acknowledged within ACK_DELAY_SECONDS)
        self._moved_away = None        # failover: the ids of the tasks moved elsewhere (DistributedInstance)

    # --- submitting ---

    def submit(self, argv, env=None, cwd="", walltime=None, retries=None, callback=None, name=None, after=(),
               priority=None, cores=None, memory=None, disk=None, gpus=None, resources=None, worker=None,
               payload=b""):
        """Runs ``argv`` (a list; ``argv[0]`` looked up on the executor's PATH) as one task.

        :param env: variables added to the executor's environment
        :param cwd: the task's working directory on the executor ("" = the executor's own)
        :param walltime: seconds after which the task's process tree is killed (status TIMEOUT)
        :param retries: how often the dispatcher may re-dispatch it after framework failures
        :param callback: instead of a Future, ``callback(result, error)`` is called once, on the
            client's reader thread (keep it short), with the :class:`Result` or the FalkonError
        :param name: the task's name in this instance (workflows: others can run ``after`` it)
        :param after: names of tasks of this instance, submitted before, that must succeed first; if one
            fails, this task ends ``DEPENDENCY_FAILED`` without running (docs/workflows.md)
        :param priority: a whole number (default 0): a queued task of a higher priority starts before
            every queued task of a lower one (docs/cli.md, "Priorities and fair share")
        :param cores: slots of one executor the task takes at once (default 1); stated, it runs on that
            many CPUs of its own where the executor pins its slots (docs/cli.md, "Tasks of several cores")
        :param memory: MiB of the memory its executor advertises that the task needs (default: not stated)
        :param disk: MiB of scratch space it needs where it runs, of what its executor advertises (the
            free space of its working directory's file system by default; default: not stated)
        :param gpus: GPUs of one executor the task needs, each a device of its own, handed over in
            ``CUDA_VISIBLE_DEVICES`` (or ROCm's variables) and ``FALKON_RESOURCE_GPUS`` (docs/cli.md,
            "GPUs and other resources")
        :param resources: other named resources it needs of one executor, as ``{"license": 1}``; each in
            ``FALKON_RESOURCE_<NAME>``
        :param worker: run the task in a persistent worker running this command (a list) instead of a
            process of its own: the executor hands it ``argv``, ``env``, ``cwd`` and ``payload`` (bytes)
            and the result is what it answers (docs/protocol.md section 9; :mod:`falkon.resident`)
        :return: a Future of its :class:`Result` (None with ``callback``)
        """
        env = env or {}
        wire.check_task(argv, env, retries)
        wall = 0 if walltime is None else max(1, int(round(float(walltime) * 1000)))
        ext = (wire.retries_ext(retries) + wire.workflow_ext(name, after) + wire.priority_ext(priority)
               + wire.resources_ext(cores, memory) + wire.disk_ext(disk) + wire.named_resources_ext(gpus, resources)
               + wire.worker_ext(worker, payload))
        return self._submit_encoded(wire.encode_task(argv, env, cwd, wall, ext), callback)

    def shell(self, command, **kw):
        """Runs ``command`` with ``/bin/sh -c``."""
        return self.submit(["/bin/sh", "-c", command], **kw)

    def submit_spec(self, spec):
        """Submits a ``TaskSpec`` dict (:func:`falkon.wire.task_spec`); returns a Future of its :class:`Result`."""
        return self._submit_encoded(wire.encode_spec(spec), None)  # encoding checks the spec's shape here

    def _submit_encoded(self, encoded, callback):
        if len(encoded) > self._client.max_task_bytes:
            raise ValueError(f"task spec is {len(encoded)} bytes, over the limit of {self._client.max_task_bytes}")
        f = callback if callback is not None else Future()
        self._client._enqueue(self, encoded, f)
        return None if callback is not None else f

    # --- what the client's threads call, under the client's lock ---

    def _fail_all(self, error):
        self._lost = error
        pending = list(self._unfinished.values())
        self._unfinished.clear()
        self._unconfirmed.clear()
        return [(p.future, error) for p in pending]

    def _move_away(self):
        """Failover (:class:`~falkon.DistributedInstance`): this instance's unfinished tasks were sent
        to other dispatchers. Nothing more is sent here; tasks not yet sent fail; a re-attachment
        names the others (ATTACH_MOVED) so that the dispatcher cancels them instead of running them
        again. Results that still arrive are delivered as usual."""
        client = self._client
        with client._lock:
            self._moved_away = list(self._unfinished)
            unsent = [e[2] for e in client._queue if e[0] is self]
            kept = [e for e in client._queue if e[0] is not self]
            client._queue.clear()
            client._queue.extend(kept)
            again = [e for e in client._resend if e[0] is not self]  # its refused bundles: named above instead
            client._resend.clear()
            client._resend.extend(again)
            self._unconfirmed.clear()
            client._in_flight -= len(unsent)
            client._room.notify_all()
        _settle([(f, FalkonError("moved to another dispatcher before it was sent")) for f in unsent])

    # --- control ---

    def status(self):
        """The instance's status document (docs/protocol.md section 7) as a dict."""
        return json.loads(self._client._request({"type": "STATUS_REQUEST", "instanceId": self.id})["json"])

    def cancel(self, *tasks):
        """Cancels these tasks of the instance, each named by what :meth:`submit` was given or
        returned (its Future, or its ``callback``); the instance goes on. A task not yet sent is
        never sent; one queued or running on the dispatcher ends CANCELLED there (a running one's
        process tree is killed: docs/protocol.md, CANCEL_TASKS). Either way its Future or callback
        gets a CANCELLED :class:`Result`. Tasks already finished are left as they are.

        :return: how many were cancelled
        """
        wanted = {id(t) for t in tasks}
        client = self._client
        unsent = []
        with client._lock:
            # not yet in a bundle: out of the client's queue
            kept = [e for e in client._queue if not (e[0] is self and id(e[2]) in wanted)]
            unsent += [e[2] for e in client._queue if e[0] is self and id(e[2]) in wanted]
            client._queue.clear()
            client._queue.extend(kept)
            # in a bundle the dispatcher refused as busy, waiting to go again: out of it
            for i, (inst, bundle) in enumerate(client._resend):
                if inst is self:
                    drop = [tid for tid, _ in bundle
                            if tid in self._unfinished and id(self._unfinished[tid].future) in wanted]
                    unsent += [self._unfinished.pop(tid).future for tid in drop]
                    client._resend[i] = (inst, [t for t in bundle if t[0] not in drop])
            client._in_flight -= len(unsent)
            sent = [tid for tid, p in self._unfinished.items() if id(p.future) in wanted]
            client._room.notify_all()
        now = int(time.time() * 1_000_000)
        _settle([(f, Result.of_status(0, "CANCELLED", "cancelled before it was sent", now)) for f in unsent])
        if not sent:
            return len(unsent)
        reply = client._request({"type": "CANCEL_TASKS", "instanceId": self.id, "clientTaskIds": sent})
        return len(unsent) + reply["cancelled"]

    def unfinished(self):
        """How many tasks of this instance have not finished."""
        with self._client._lock:
            return len(self._unfinished)

    def destroy(self):
        """Ends the instance: unfinished tasks are cancelled (their futures get CANCELLED results)."""
        if self._destroyed:
            return 0
        reply = self._client._request({"type": "DESTROY", "instanceId": self.id})
        with self._client._lock:
            self._destroyed = True
            failed = self._fail_all(FalkonError(f"instance {self.id:x} was destroyed"))
            self._client._instances.pop(self.id, None)
        _settle(failed)
        return reply["cancelled"]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self.destroy()
        except FalkonError:
            pass
        return False


class Client(_Connection, _Bundler):
    """One connection to a dispatcher. ``with Client("host:port") as c: inst = c.create_instance()``.

    :param address: ``host:port`` of the dispatcher (default port 50500)
    :param token: the deployment's secret; by default found as every Falkon command finds it
        (``token_file``, ``$FALKON_TOKEN``, ``$FALKON_TOKEN_FILE``, ``~/.falkon/token``)
    :param tls_ca: a CA bundle (PEM) to verify the dispatcher's certificate: the connection uses TLS
    :param bundle_size: most tasks per SUBMIT
    :param max_in_flight: most unfinished tasks; ``submit`` blocks beyond it
    :param reconnect_for: seconds to keep dialling after the connection breaks (0: give up at once)
    """

    def __init__(self, address="127.0.0.1:50500", token=None, token_file=None, tls_ca=None,
                 client_name="falkon-python", lease_seconds=120, bundle_size=100, max_in_flight=100_000,
                 connect_timeout=10.0, reconnect_for=120.0, max_task_bytes=1024 * 1024):
        self.host, self.port = parse_address(address)
        self.address = f"{self.host}:{self.port}"
        self._token = find_token(token, token_file)
        self._tls = ssl.create_default_context(cafile=tls_ca) if tls_ca else None
        self.client_name = client_name
        self.lease_seconds = int(lease_seconds)
        self.bundle_size = int(bundle_size)
        self.max_in_flight = int(max_in_flight)
        self.connect_timeout = float(connect_timeout)
        self.reconnect_for = float(reconnect_for)
        self.max_task_bytes = int(max_task_bytes)
        self.max_frame_length = wire.DEFAULT_MAX_FRAME_LENGTH
        self.heartbeat_millis = 0
        self.dispatcher_id = ""

        self._lock = threading.RLock()
        self._wakeup = threading.Condition(self._lock)   # the sender: something to send, or state changed
        self._room = threading.Condition(self._lock)     # submitters waiting for max_in_flight
        self._write_lock = threading.Lock()
        self._sock = None
        self._connected = False
        self._closed = False
        self._failure = None
        self._request_ids = itertools.count(1)
        self._requests = {}                               # requestId -> (Future, message)
        self._instances = {}                              # instanceId -> Instance
        self._queue = collections.deque()                 # (instance, spec bytes, Future) not yet bundled
        self._resend = collections.deque()                # (instance, bundle) to send again first
        self._in_flight = 0
        self._last_write = time.monotonic()
        self._busy_pause = 0.0
        self._busy_until = 0.0
        self._sender_holds = False  # the sender has taken a bundle and not yet written it
        self._last_enqueue = 0.0
        self._ack_due = None  # when received results must be acknowledged (the sender does it)

        self._sock = self._dial()
        self._connected = True
        self._reader = threading.Thread(target=self._read_loop, name="falkon-client-reader", daemon=True)
        self._sender = threading.Thread(target=self._send_loop, name="falkon-client-sender", daemon=True)
        self._reader.start()
        self._sender.start()

    # --- public API ---

    def create_instance(self, name=None, lease_seconds=None):
        """A new instance; ``lease_seconds`` is how long it outlives a broken connection (default: the client's)."""
        lease = self.lease_seconds if lease_seconds is None else int(lease_seconds)
        reply = self._request({"type": "CREATE_INSTANCE", "clientName": name or self.client_name,
                               "leaseSeconds": lease})
        inst = Instance(self, reply["instanceId"], reply["secret"], lease)
        with self._lock:
            self._instances[inst.id] = inst
        return inst

    def status(self, timeout=None):
        """The dispatcher's status document as a dict (``timeout``: seconds to wait for it, else forever)."""
        return json.loads(self._request({"type": "STATUS_REQUEST", "instanceId": 0}, timeout)["json"])

    def close(self):
        """Closes the connection; instances without a lease are destroyed by the dispatcher."""
        with self._lock:
            if self._closed:
                return
            self._maybe_ack(now=True)  # what arrived is acknowledged: a later client is not sent it again
            self._closed = True
            self._wakeup.notify_all()
            sock = self._sock
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        self._sender.join(5)
        self._reader.join(5)
        self._fail_everything(ConnectionLost(f"the connection to dispatcher at {self.address} was closed"))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
