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
from .token import find_token

log = logging.getLogger("falkon.client")

DEFAULT_PORT = 50500
# A task submitted this long after the one before goes out from the submitting thread at once;
# closer together, they wait for the sender thread, which bundles them (docs/python.md)
INLINE_GAP_SECONDS = 0.0002
_INVALID_TASK_INDEX = re.compile(r"task (\d+) of the bundle")


class FalkonError(Exception):
    """A failure reported by (or about) the dispatcher; ``code`` is the protocol error code, or 0."""

    def __init__(self, message, code=0):
        super().__init__(message)
        self.code = code


class ConnectionLost(FalkonError):
    """The connection to the dispatcher is gone and could not be re-established."""


class Result:
    """A task's final result, as the dispatcher delivered it."""

    __slots__ = ("task_id", "status", "exit_code", "stdout", "stderr", "detail", "flags", "executor_id",
                 "attempt", "submitted_micros", "dispatched_micros", "completed_micros", "started_micros",
                 "finished_micros", "dependency")

    def __init__(self, delivered):
        ex = delivered["execution"]
        self.task_id = delivered["clientTaskId"]
        self.status = wire.STATUS_NAMES[ex["status"]] if ex["status"] < len(wire.STATUS_NAMES) else str(ex["status"])
        self.exit_code = ex["exitCode"]
        self.stdout = ex["stdout"]
        self.stderr = ex["stderr"]
        self.detail = ex["detail"]
        self.flags = ex["flags"]
        self.executor_id = delivered["executorId"]
        self.attempt = delivered["attempt"]
        self.submitted_micros = delivered["submittedMicros"]
        self.dispatched_micros = delivered["dispatchedMicros"]
        self.completed_micros = delivered["completedMicros"]
        self.started_micros = ex["startedMicros"]
        self.finished_micros = ex["finishedMicros"]
        # DEPENDENCY_FAILED: (the task id of the task that failed first upstream, what this one needed of it)
        self.dependency = wire.dependency_of(ex)

    @classmethod
    def of_status(cls, task_id, status, detail, micros):
        """A result made on this side (a task that never reached the dispatcher)."""
        return cls({"clientTaskId": task_id, "executorId": "", "attempt": 0, "submittedMicros": micros,
                    "dispatchedMicros": 0, "completedMicros": micros,
                    "execution": {"status": wire.STATUS_NAMES.index(status), "exitCode": -1, "flags": 0,
                                  "startedMicros": 0, "finishedMicros": 0, "stdout": b"", "stderr": b"",
                                  "detail": detail, "ext": []}})

    @property
    def ok(self):
        """True iff the process ran and exited 0."""
        return self.status == "EXITED" and self.exit_code == 0

    def __repr__(self):
        why = f" ({self.detail})" if self.detail else ""
        return f"Result(task={self.task_id}, {self.status}, exit={self.exit_code}{why})"


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


class _Pending:
    """A task submitted and not yet finished."""
    __slots__ = ("spec", "future")

    def __init__(self, spec, future):
        self.spec = spec
        self.future = future


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
        self._acked = 0
        self._moved_away = None        # failover: the ids of the tasks moved elsewhere (DistributedInstance)

    # --- submitting ---

    def submit(self, argv, env=None, cwd="", walltime=None, retries=None, callback=None, name=None, after=(),
               priority=None, cores=None, memory=None, disk=None, worker=None, payload=b""):
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
        :param worker: run the task in a persistent worker running this command (a list) instead of a
            process of its own: the executor hands it ``argv``, ``env``, ``cwd`` and ``payload`` (bytes)
            and the result is what it answers (docs/protocol.md section 9; :mod:`falkon.resident`)
        :return: a Future of its :class:`Result` (None with ``callback``)
        """
        env = env or {}
        wire.check_task(argv, env, retries)
        wall = 0 if walltime is None else max(1, int(round(float(walltime) * 1000)))
        ext = (wire.retries_ext(retries) + wire.workflow_ext(name, after) + wire.priority_ext(priority)
               + wire.resources_ext(cores, memory) + wire.disk_ext(disk) + wire.worker_ext(worker, payload))
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


def _settle(outcomes):
    """Completes each task's Future, or calls its callback, with its Result or error."""
    for future, outcome in outcomes:
        failed = isinstance(outcome, BaseException)
        if not isinstance(future, Future):
            try:
                future(None, outcome) if failed else future(outcome, None)
            except Exception:
                log.exception("a task callback failed")
        elif future.done():
            continue
        elif failed:
            future.set_exception(outcome)
        else:
            future.set_result(outcome)


class Client:
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

    # --- connection ---

    def _dial(self):
        """Connects and completes the handshake; raises FalkonError naming what went wrong."""
        try:
            raw = socket.create_connection((self.host, self.port), timeout=self.connect_timeout)
        except OSError as e:
            raise FalkonError(f"cannot connect to dispatcher at {self.address}: {e.strerror or e}") from e
        try:
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock = self._tls.wrap_socket(raw, server_hostname=self.host) if self._tls else raw
            sock.sendall(wire.encode({"type": "HELLO", "magic": wire.MAGIC, "version": wire.VERSION,
                                      "role": wire.ROLE_CLIENT, "token": self._token,
                                      "agent": "falkon-python/0.1.0"}))
            sock.settimeout(self.connect_timeout)
            frames = _FrameReader(sock, wire.DEFAULT_MAX_FRAME_LENGTH)
            reply = frames.next()
            if reply is None:
                raise OSError("connection closed during the handshake")
        except (OSError, wire.ProtocolError) as e:
            raw.close()
            raise FalkonError(f"no handshake from dispatcher at {self.address}: {e}") from e
        if reply["type"] == "ERROR":
            raw.close()
            name = wire.ERROR_NAMES.get(reply["code"], str(reply["code"]))
            raise FalkonError(f"dispatcher at {self.address} refused the connection: {name} {reply['message']}",
                              reply["code"])
        if reply["type"] != "WELCOME":
            raw.close()
            raise FalkonError(f"dispatcher at {self.address} answered HELLO with {reply['type']}")
        self.max_frame_length = reply["maxFrameLength"]
        self.heartbeat_millis = reply["heartbeatMillis"]
        self.dispatcher_id = reply["dispatcherId"]
        frames.max = self.max_frame_length
        self._frames = frames  # it may already hold bytes that followed WELCOME
        # reads wake up at least every heartbeat interval, to send ours and notice a silent peer
        sock.settimeout(self.heartbeat_millis / 1000.0 if self.heartbeat_millis else None)
        return sock

    def _write(self, msg):
        data = wire.encode(msg)
        with self._write_lock:
            sock = self._sock
            if sock is None:
                raise OSError("not connected")
            sock.sendall(data)
            self._last_write = time.monotonic()

    def _request(self, msg, timeout=None):
        f = Future()
        with self._lock:
            if self._failure is not None:
                raise self._failure
            rid = next(self._request_ids) & 0xFFFFFFFF or next(self._request_ids)
            msg["requestId"] = rid
            self._requests[rid] = (f, msg)
            connected = self._connected
        if connected:
            try:
                self._write(msg)
            except OSError:
                pass  # the reader notices the broken connection and fails or re-sends the request
        return f.result(timeout)

    # --- submission (any thread, then the sender) ---

    def _enqueue(self, inst, spec, future):
        # a callback (run on the reader) that submits must not wait for room only the reader can make
        wait = threading.current_thread() is not self._reader
        inline = None
        with self._lock:
            while wait and self._in_flight >= self.max_in_flight and self._failure is None and inst._lost is None:
                self._room.wait()
            if self._failure is not None or inst._lost is not None:
                failed = [(future, inst._lost or self._failure)]
            else:
                failed = None
                self._in_flight += 1
                self._queue.append((inst, spec, future))
                now = time.monotonic()
                sparse, self._last_enqueue = now - self._last_enqueue > INLINE_GAP_SECONDS, now
                if (sparse and self._connected and not self._closed and len(self._queue) == 1 and not self._resend
                        and not self._sender_holds and self._write_lock.acquire(blocking=False)):
                    # a task on its own (none came just before): this thread sends it, rather than
                    # waking the sender for a bundle of one; the write lock, taken before the lock is
                    # let go (never waited for under it), keeps bundles in the order they were taken
                    inline = self._next_bundle()
                    if inline is None:
                        self._write_lock.release()
                else:
                    self._wakeup.notify()
        if failed:
            _settle(failed)
        elif inline is not None:
            inst, rid, bundle = inline
            try:
                self._write_submit({"requestId": rid, "instanceId": inst.id}, bundle, locked=True)
            except OSError:
                pass  # kept in _unconfirmed: sent again after reconnecting
            finally:
                self._write_lock.release()

    def _next_bundle(self):
        """Under the lock: the next (instance, request id, bundle) to send, or None."""
        if self._resend:
            inst, bundle = self._resend.popleft()
            if inst._lost is not None:
                return None
        else:
            inst = self._queue[0][0]
            bundle, size = [], 64
            budget = self.max_frame_length - 1024
            while self._queue and len(bundle) < self.bundle_size:
                i, spec, future = self._queue[0]
                if i is not inst or (bundle and size + len(spec) + 16 > budget):
                    break
                self._queue.popleft()
                if inst._lost is not None:
                    _settle([(future, inst._lost)])
                    self._in_flight -= 1
                    continue
                tid = next(inst._ids)
                inst._unfinished[tid] = _Pending(spec, future)
                bundle.append((tid, spec))
                size += len(spec) + 16
            if not bundle:
                return None
        rid = next(self._request_ids) & 0xFFFFFFFF or next(self._request_ids)
        inst._unconfirmed[rid] = bundle
        self._requests[rid] = (None, inst)
        return inst, rid, bundle

    def _send_loop(self):
        while True:
            with self._lock:
                while not self._closed and (not self._connected or not (self._queue or self._resend)):
                    self._wakeup.wait(self._heartbeat_due())
                    if self._connected and not self._closed:
                        self._maybe_heartbeat()
                if self._closed:
                    return
                wait = self._busy_until - time.monotonic() if self._resend else 0
                if wait > 0:
                    self._wakeup.wait(wait)
                    continue
                item = self._next_bundle()
                self._sender_holds = item is not None
            if item is None:
                continue
            inst, rid, bundle = item
            try:
                self._write_submit({"requestId": rid, "instanceId": inst.id}, bundle)
            except OSError:
                pass  # kept in _unconfirmed: sent again after reconnecting
            finally:
                with self._lock:
                    self._sender_holds = False

    def _write_submit(self, msg, bundle, locked=False):
        # the specs are already encoded: splice their bytes in rather than re-encoding them
        body = bytearray()
        body += wire._U32.pack(msg["requestId"])
        body += wire._FIXED["u64"].pack(msg["instanceId"])
        body += wire._U32.pack(len(bundle))
        for tid, spec in bundle:
            body += wire._FIXED["u64"].pack(tid)
            body += wire._U32.pack(len(spec))
            body += spec
        frame = wire._U32.pack(len(body) + 1) + bytes([wire.TYPE_OF["SUBMIT"]]) + body
        if not locked:
            self._write_lock.acquire()
        try:
            if self._sock is None:
                raise OSError("not connected")
            self._sock.sendall(frame)
            self._last_write = time.monotonic()
        finally:
            if not locked:
                self._write_lock.release()

    def _heartbeat_due(self):
        if not self.heartbeat_millis:
            return None
        return max(0.01, self._last_write + self.heartbeat_millis / 1000.0 - time.monotonic())

    def _maybe_heartbeat(self):
        if self.heartbeat_millis and time.monotonic() - self._last_write >= self.heartbeat_millis / 1000.0:
            try:
                self._write({"type": "HEARTBEAT", "timeMicros": int(time.time() * 1e6)})
            except OSError:
                pass

    # --- receiving (the reader thread) ---

    def _read_loop(self):
        while True:
            try:
                self._serve(self._sock)
            except (OSError, wire.ProtocolError, _Silent) as e:
                why = str(e) or type(e).__name__
            with self._lock:
                if self._closed:
                    return
            if isinstance(self._failure, FalkonError) and not isinstance(self._failure, ConnectionLost):
                return
            log.warning("connection to dispatcher at %s lost (%s); reconnecting", self.address, why)
            if not self._reconnect():
                return

    def _serve(self, sock):
        silent_limit = 3 * self.heartbeat_millis / 1000.0 if self.heartbeat_millis else None
        last_read = time.monotonic()
        reader = self._frames
        while True:
            try:
                msg = reader.next()
            except socket.timeout:
                if silent_limit and time.monotonic() - last_read > silent_limit:
                    raise _Silent(f"nothing heard for {silent_limit:.0f} s") from None
                with self._lock:
                    self._maybe_heartbeat()
                continue
            last_read = time.monotonic()
            if msg is None:
                raise OSError("closed by the dispatcher")
            self._handle(msg)

    def _handle(self, msg):
        t = msg["type"]
        if t == "DELIVER":
            self._deliver(msg)
        elif t == "HEARTBEAT":
            pass
        elif t in ("SUBMITTED", "INSTANCE_CREATED", "STATUS", "DESTROYED", "ATTACHED", "TASKS_CANCELLED", "ERROR"):
            self._reply(msg)
        else:
            raise wire.ProtocolError(f"unexpected {t} from the dispatcher")

    def _deliver(self, msg):
        outcomes = []
        ack = None
        with self._lock:
            inst = self._instances.get(msg["instanceId"])
            if inst is None:
                return
            for d in msg["results"]:
                p = inst._unfinished.pop(d["clientTaskId"], None)
                if d["seq"] > inst._acked:
                    ack = d["seq"]
                if p is not None:  # a result already received (re-delivered after a reconnect) is dropped
                    outcomes.append((p.future, Result(d)))
                    self._in_flight -= 1
            if outcomes:
                self._room.notify_all()
        _settle(outcomes)
        if ack is not None:
            inst._acked = ack
            try:
                self._write({"type": "ACK", "instanceId": inst.id, "upToSeq": ack})
            except OSError:
                pass

    def _reply(self, msg):
        rid = msg["requestId"]
        if rid == 0:  # a protocol error: the dispatcher closes the connection
            code = msg["code"]
            error = FalkonError(f"dispatcher at {self.address}: {wire.ERROR_NAMES.get(code, code)} {msg['message']}",
                                code)
            if code in (3, 13):  # UNAUTHORIZED, SHUTTING_DOWN: dialling again will not help
                self._fail_everything(error)
            raise OSError(str(error))
        with self._lock:
            waiter, what = self._requests.pop(rid, (None, None))
        if waiter is None and isinstance(what, Instance):
            self._bundle_answered(what, rid, msg)
        elif waiter is not None:
            if msg["type"] == "ERROR":
                name = wire.ERROR_NAMES.get(msg["code"], msg["code"])
                waiter.set_exception(FalkonError(f"{name}: {msg['message']}", msg["code"]))
            else:
                waiter.set_result(msg)

    def _bundle_answered(self, inst, rid, msg):
        outcomes = []
        with self._lock:
            bundle = inst._unconfirmed.pop(rid, None)
            if bundle is None:
                return
            if msg["type"] == "SUBMITTED":
                self._busy_pause = 0.0
                return
            code = msg["code"]
            if code == wire.BUSY:
                # over its memory budget: this bundle goes again first, after a pause that grows while
                # the dispatcher stays busy (a SUBMITTED resets it)
                self._resend.appendleft((inst, bundle))
                self._busy_pause = min(2.0, self._busy_pause * 2 or 0.01)
                self._busy_until = time.monotonic() + self._busy_pause
                self._wakeup.notify()
                return
            else:
                m = _INVALID_TASK_INDEX.search(msg["message"]) if code == wire.INVALID_TASK else None
                bad = [bundle[int(m.group(1))]] if m and int(m.group(1)) < len(bundle) else bundle
                error = FalkonError(f"{wire.ERROR_NAMES.get(code, code)}: {msg['message']}", code)
                for tid, _ in bad:
                    p = inst._unfinished.pop(tid, None)
                    if p is not None:
                        outcomes.append((p.future, error))
                        self._in_flight -= 1
                rest = [t for t in bundle if t not in bad]
                if rest:  # the dispatcher queued none of the bundle: the valid tasks go again
                    self._resend.append((inst, rest))
                    self._wakeup.notify()
                self._room.notify_all()
        _settle(outcomes)

    def _reconnect(self):
        """Dials again with back-off; re-attaches the instances. False when it gave up."""
        with self._lock:
            self._connected = False
            with self._write_lock:
                old, self._sock = self._sock, None
            # requests other than bundles cannot be answered any more
            failed = [(f, ConnectionLost(f"connection to dispatcher at {self.address} lost"))
                      for f, _ in self._requests.values() if f is not None]
            self._requests = {rid: v for rid, v in self._requests.items() if v[0] is None}
        if old is not None:
            old.close()
        _settle(failed)
        deadline = time.monotonic() + self.reconnect_for
        pause = 0.05
        while True:
            with self._lock:
                if self._closed:
                    return False
            try:
                sock = self._dial()
                break
            except FalkonError as e:
                if e.code or time.monotonic() + pause > deadline:
                    self._fail_everything(e if e.code else ConnectionLost(
                        f"connection to dispatcher at {self.address} lost and not re-established within "
                        f"{self.reconnect_for:.0f} s: {e}"))
                    return False
                time.sleep(pause)
                pause = min(pause * 2, 2.0)
        with self._write_lock:
            self._sock = sock
        self._reattach(sock)
        return True

    def _reattach(self, sock):
        """On the new connection, before anything else is sent: ATTACH each instance, then send again
        every bundle it had not confirmed (bundles of instances that cannot be attached fail)."""
        outcomes = []
        with self._lock:
            self._requests = {}
            for inst in list(self._instances.values()):
                if inst.lease_seconds == 0:
                    outcomes += inst._fail_all(ConnectionLost(
                        f"instance {inst.id:x} had no lease and ended with the connection to {self.address}"))
                    del self._instances[inst.id]
                    continue
                rid = next(self._request_ids) & 0xFFFFFFFF or next(self._request_ids)
                self._requests[rid] = (_Attach(self, inst), None)
                moved = inst._moved_away
                try:
                    if moved is None:
                        self._write({"type": "ATTACH", "requestId": rid, "instanceId": inst.id, "secret": inst.secret})
                    else:  # failover: the dispatcher cancels what moved elsewhere before it could run again
                        self._write({"type": "ATTACH_MOVED", "requestId": rid, "instanceId": inst.id,
                                     "secret": inst.secret, "movedClientTaskIds": moved})
                except OSError:
                    return  # broken again: the reader notices
                if moved is not None:
                    continue
                for bundle in inst._unconfirmed.values():
                    self._resend.append((inst, bundle))
                inst._unconfirmed.clear()
            self._in_flight -= len(outcomes)
            self._connected = True
            self._wakeup.notify_all()
            self._room.notify_all()
        _settle(outcomes)

    def _instance_gone(self, inst, reason):
        with self._lock:
            self._instances.pop(inst.id, None)
            outcomes = inst._fail_all(FalkonError(
                f"instance {inst.id:x} is gone from dispatcher at {self.address} ({reason}): "
                f"its unfinished tasks were lost", wire.UNKNOWN_INSTANCE))
            self._in_flight -= len(outcomes)
            self._room.notify_all()
        _settle(outcomes)

    def _fail_everything(self, error):
        outcomes = []
        with self._lock:
            if self._failure is None:
                self._failure = error
            for inst in self._instances.values():
                outcomes += inst._fail_all(error)
            self._instances.clear()
            while self._queue:
                outcomes.append((self._queue.popleft()[2], error))
            self._resend.clear()
            outcomes += [(f, error) for f, _ in self._requests.values() if f is not None]
            self._requests.clear()
            self._in_flight = 0
            self._room.notify_all()
            self._wakeup.notify_all()
        _settle(outcomes)


class _Attach:
    """The waiter of a re-attaching ATTACH: an instance the dispatcher no longer knows is lost."""

    def __init__(self, client, inst):
        self.client = client
        self.inst = inst

    def set_result(self, msg):
        log.info("instance %x re-attached: %d results re-delivered", self.inst.id, msg["redelivered"])

    def set_exception(self, error):
        self.client._instance_gone(self.inst, str(error))


class _Silent(Exception):
    """The dispatcher sent nothing for three heartbeat intervals."""


class _FrameReader:
    """Reads whole frames from a socket through one growing buffer."""

    def __init__(self, sock, max_frame_length):
        self.sock = sock
        self.max = max_frame_length
        self.buf = bytearray()

    def next(self):
        """The next message, or None at end of stream; socket.timeout when nothing came in time."""
        while True:
            if len(self.buf) >= 4:
                length = wire._U32.unpack_from(self.buf, 0)[0]
                if length < 1 or length > self.max:
                    raise wire.ProtocolError(f"frame length {length} outside 1..{self.max}")
                if len(self.buf) >= 4 + length:
                    frame = bytes(self.buf[4:4 + length])
                    del self.buf[:4 + length]
                    return wire.decode_body(frame[0], frame[1:])
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                return None
            self.buf += chunk

