"""The client's sending side: tasks queued from any thread go out in SUBMIT bundles, from the
submitting thread when they come one at a time, else from the sender thread, which lets the next
bundle fill while one is on the wire; the dispatcher's answer to each bundle (accepted, busy, one
task refused). A part of :class:`falkon.Client`."""

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

# A task submitted this long after the one before goes out from the submitting thread at once;
# closer together, they wait for the sender thread, which bundles them (docs/python.md)
INLINE_GAP_SECONDS = 0.0002
_INVALID_TASK_INDEX = re.compile(r"task (\d+) of the bundle")


class _Bundler:
    """The submission methods of :class:`falkon.Client` (its state lives there)."""

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
                    self._wakeup.wait(self._sender_due())
                    if self._connected and not self._closed:
                        self._maybe_heartbeat()
                        self._maybe_ack()
                if self._closed:
                    return
                wait = self._busy_until - time.monotonic() if self._resend else 0
                if wait > 0:
                    self._wakeup.wait(wait)
                    continue
                self._maybe_ack()  # also while bundles keep it busy
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
