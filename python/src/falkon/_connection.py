"""The client's connection: dialling and the handshake (TLS, token), requests matched to their
replies, the reader thread (replies, DELIVER frames, heartbeats), and reconnection with back-off,
re-attaching every instance. A part of :class:`falkon.Client`."""

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
from .results import ConnectionLost, FalkonError, Result, _Pending, _settle
from .token import find_token

log = logging.getLogger("falkon.client")

# Results of an instance with a lease are acknowledged at most this long after they arrive, or at
# once when this many are waiting: the dispatcher keeps each result until then (docs/python.md)
ACK_DELAY_SECONDS = 0.05
ACK_EVERY = 512


class _Connection:
    """The connection methods of :class:`falkon.Client` (its state lives there)."""

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

    def _sender_due(self):
        """Under the lock: seconds until the sender must wake (a heartbeat or acknowledgements due), or None."""
        now = time.monotonic()
        due = self._last_write + self.heartbeat_millis / 1000.0 if self.heartbeat_millis else None
        if self._ack_due is not None and self._connected and (due is None or self._ack_due < due):
            due = self._ack_due
        return None if due is None else max(0.01, due - now)  # at most 100 wake-ups a second, connected or not

    def _maybe_ack(self, now=False):
        """Under the lock: acknowledges what the instances have received, once the delay has passed
        (or ``now``). Results are acknowledged in batches rather than one ACK per DELIVER: an ACK per
        result was a write here and a read and an event in the dispatcher for each task
        (docs/python.md, "Acknowledgements")."""
        if self._ack_due is None or not self._connected or not (now or time.monotonic() >= self._ack_due):
            return
        self._ack_due = None
        for inst in self._instances.values():
            if inst._ack_wanted > inst._acked:
                try:
                    self._write({"type": "ACK", "instanceId": inst.id, "upToSeq": inst._ack_wanted})
                except OSError:
                    self._ack_due = time.monotonic()  # again once connected: the reader notices the break
                    return
                inst._acked = inst._ack_wanted

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
                if d["seq"] > inst._ack_wanted:
                    inst._ack_wanted = d["seq"]
                if p is not None:  # a result already received (re-delivered after a reconnect) is dropped
                    outcomes.append((p.future, Result(d)))
                    self._in_flight -= 1
            if outcomes:
                self._room.notify_all()
            if inst._ack_wanted - inst._acked >= ACK_EVERY:
                ack = inst._acked = inst._ack_wanted  # many at once: now, from this thread
            elif inst._ack_wanted > inst._acked and self._ack_due is None:
                self._ack_due = time.monotonic() + ACK_DELAY_SECONDS  # the sender sends it then
                self._wakeup.notify()
        _settle(outcomes)
        if ack is not None:
            try:
                self._write({"type": "ACK", "instanceId": inst.id, "upToSeq": ack})
            except OSError:
                pass  # after re-attaching, the dispatcher re-delivers them and they are acknowledged again

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
        if waiter is None and what is not None:  # a SUBMIT's: (None, its Instance)
            self._bundle_answered(what, rid, msg)
        elif waiter is not None:
            if msg["type"] == "ERROR":
                name = wire.ERROR_NAMES.get(msg["code"], msg["code"])
                waiter.set_exception(FalkonError(f"{name}: {msg['message']}", msg["code"]))
            else:
                waiter.set_result(msg)

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
