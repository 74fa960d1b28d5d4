"""Several dispatchers used as one (the 3-tier Falkon of Blue Gene/P; docs/scaling.md).

A :class:`DistributedInstance` holds an instance on every dispatcher of a :class:`DistributedClient`
and sends each dispatcher no more than twice its executors' slots, less what it holds already, so
that no dispatcher's executors wait while another holds a backlog of this client's tasks. A task
whose dispatcher is lost is sent to another one; each task's future completes once. The same
design as the Java ``io.falkon.client.DistributedClient``.

Failover: a dispatcher that has not answered a status request for ``failover_after`` seconds (5 by
default; killed, hung or cut off) is taken as lost and its unfinished tasks go to the others at
once; if it comes back (restarted from its journal) its part re-attaches naming them (ATTACH_MOVED)
and it cancels them rather than run them again (docs/scaling.md).
"""

import collections
import concurrent.futures
import logging
import threading
import time
from concurrent.futures import Future

from . import wire
from .client import Client, FalkonError

log = logging.getLogger("falkon.distributed")
POLL_SECONDS = 0.5
MAX_SENDS = 5
FAILOVER_AFTER = 5.0


class _Member:
    def __init__(self, address):
        self.address = address
        self.client = None
        self.slots = 0
        self.leaving = False
        self.heard = time.monotonic()   # when it last answered (or was reached)
        self.lost = False               # taken as lost (failover) until it answers again

    def usable(self):
        return self.client is not None and not self.leaving and not self.lost


class DistributedClient:
    """Clients of several dispatchers: ``DistributedClient("h1:p1,h2:p2", token=...)``.

    Keyword arguments go to each :class:`~falkon.Client`. Unreachable dispatchers are dialled again
    every half second; :meth:`watch` follows a file listing them (one per line). ``"file:PATH"``
    follows that file from the start (``falkon provision --layout tiered`` keeps it); it may list none
    yet: tasks wait in the client until a dispatcher appears.
    """

    def __init__(self, addresses, failover_after=FAILOVER_AFTER, **client_kwargs):
        if failover_after < 0:
            raise ValueError(f"failover_after must not be negative, got {failover_after}")
        self.failover_after = failover_after
        self._kwargs = client_kwargs
        self._lock = threading.RLock()
        self._members = collections.OrderedDict()
        self._instances = []
        self._watched = None
        self._closed = False
        watching = isinstance(addresses, str) and addresses.startswith(FILE_PREFIX)
        if watching:
            self._watched = addresses[len(FILE_PREFIX):]
        else:
            for a in _split(addresses):
                self._members[a] = _Member(a)
            if not self._members:
                raise ValueError(f"no dispatcher address in {addresses!r}")
        self._refresh()
        if not watching and not any(m.usable() for m in self._members.values()):
            self.close()
            raise FalkonError(f"none of the dispatchers {list(self._members)} can be reached")
        self._stop = threading.Event()
        self._poller = threading.Thread(target=self._poll, name="falkon-distributed", daemon=True)
        self._poller.start()

    def add_dispatcher(self, address):
        with self._lock:
            self._members.setdefault(address.strip(), _Member(address.strip()))

    def watch(self, path):
        """Follows the dispatchers listed in ``path`` (blank lines and ``#`` comments skipped)."""
        self._watched = path

    def create_instance(self, name="falkon-python"):
        inst = DistributedInstance(self, name)
        with self._lock:
            self._instances.append(inst)
            members = list(self._members.values())
        for m in members:
            inst._join(m)
        inst._pump()
        return inst

    def status(self):
        """Every dispatcher's status document and their sums (as ``falkon status --dispatcher a,b``)."""
        out = {"dispatchers": 0, "queued": 0, "running": 0, "completed": 0, "failed": 0,
               "executors": {"registered": 0, "slots": 0}, "dispatcherList": []}
        with self._lock:
            members = list(self._members.values())
        for m in members:
            out["dispatchers"] += 1
            entry = {"address": m.address, "reachable": False}
            try:
                # a lost one may be hung: not waited for
                st = m.client.status(timeout=5) if m.client and not m.lost else None
            except (FalkonError, OSError, concurrent.futures.TimeoutError):
                st = None
            if st is not None:
                entry.update(reachable=True, status=st)
                for k in ("queued", "running", "completed", "failed"):
                    out[k] += st.get(k, 0)
                out["executors"]["registered"] += st.get("executors", {}).get("registered", 0)
                out["executors"]["slots"] += st.get("executors", {}).get("slots", 0)
            out["dispatcherList"].append(entry)
        return out

    def _poll(self):
        while not self._stop.wait(POLL_SECONDS):
            self._refresh()

    def _refresh(self):
        if self._watched:
            try:
                with open(self._watched) as f:
                    listed = [ln.strip() for ln in f if ln.strip() and not ln.strip().startswith("#")]
                with self._lock:
                    for a in listed:
                        self._members.setdefault(a, _Member(a)).leaving = False
                    for m in self._members.values():
                        m.leaving = m.address not in listed
            except FileNotFoundError:
                pass  # not written yet: lists none
            except OSError as e:
                log.warning("cannot read the dispatchers file %s: %s", self._watched, e)
        with self._lock:
            members = list(self._members.values())
            instances = list(self._instances)
        for m in members:
            if m.client is None and not m.leaving:
                try:
                    m.client = Client(m.address, **self._kwargs)
                    m.heard = time.monotonic()
                except FalkonError as e:
                    log.debug("dispatcher %s not reachable yet: %s", m.address, e)
                    continue
            if m.client is None:
                continue
            try:
                # a hung dispatcher must not hold the poll: an answer later than this counts as none
                st = m.client.status(timeout=2.0)
                suspended = sum(e.get("slots", 0) for e in st.get("executorList", []) if e.get("state") == "suspended")
                m.slots = max(0, st.get("executors", {}).get("slots", 0) - suspended)
                m.heard = time.monotonic()
                if m.lost:
                    m.lost = False
                    log.info("dispatcher %s answers again: the tasks that moved away are cancelled there", m.address)
                    for inst in instances:
                        inst._back(m)
            except (FalkonError, OSError, concurrent.futures.TimeoutError):
                m.slots = 0
            if not m.lost and self.failover_after and time.monotonic() - m.heard > self.failover_after:
                m.lost = True
                log.warning("dispatcher %s has not answered for %.1f s: its unfinished tasks go to the others",
                            m.address, self.failover_after)
                for inst in instances:
                    inst._failover(m)
            for inst in instances:
                inst._join(m)
        for inst in instances:
            inst._pump()

    def _forget(self, inst):
        with self._lock:
            if inst in self._instances:
                self._instances.remove(inst)

    def close(self):
        self._closed = True
        if hasattr(self, "_stop"):
            self._stop.set()
        for inst in list(self._instances):
            inst.close()
        for m in self._members.values():
            if m.client is not None:
                m.client.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class _Part:
    def __init__(self, member, instance):
        self.member = member
        self.instance = instance
        self.held = 0
        self.dead = False
        self.tasks = set()   # sent here, no result yet: what a failover moves

    def usable(self):
        return not self.dead and self.member.usable() and self.instance._lost is None

    def free(self):
        return 2 * self.member.slots - self.held


class _Task:
    __slots__ = ("argv", "kwargs", "future", "sends")

    def __init__(self, argv, kwargs):
        self.argv = argv
        self.kwargs = kwargs
        self.future = Future()
        self.sends = 0


class DistributedInstance:
    """One instance on every dispatcher, used as one; :meth:`submit` as :meth:`falkon.Instance.submit`."""

    def __init__(self, owner, name):
        self._owner = owner
        self._name = name
        self._lock = threading.RLock()
        self._parts = {}
        self._moved_from = []   # parts whose tasks moved elsewhere, until their dispatcher is back
        self._pending = collections.deque()
        self._closed = False
        self.resent = 0

    def _join(self, member):
        if self._closed or not member.usable():
            return
        with self._lock:
            p = self._parts.get(member.address)
            if p is not None and not p.dead and p.instance._lost is None:
                return
        try:
            inst = member.client.create_instance(self._name)
        except (FalkonError, OSError):
            return
        with self._lock:
            self._parts[member.address] = _Part(member, inst)

    def submit(self, argv, env=None, cwd="", walltime=None, retries=None):
        """Runs ``argv`` on whichever dispatcher has room; a Future of its :class:`~falkon.Result`."""
        if self._closed:
            raise FalkonError("the instance is closed")
        env = env or {}
        wire.check_task(argv, env, retries)  # refused here, in the caller's thread, like Instance.submit
        t = _Task(list(argv), dict(env=env, cwd=cwd, walltime=walltime, retries=retries))
        with self._lock:
            self._pending.append(t)
        self._pump()
        return t.future

    def held_by(self):
        """How many tasks each dispatcher holds now, by address."""
        with self._lock:
            return {a: p.held for a, p in self._parts.items()}

    def _pump(self):
        sends = []
        with self._lock:
            while self._pending and not self._closed:
                usable = [p for p in self._parts.values() if p.usable() and p.free() > 0]
                if not usable:
                    break
                best = max(usable, key=_Part.free)
                t = self._pending.popleft()
                best.held += 1
                best.tasks.add(t)
                t.sends += 1
                sends.append((best, t))
        for p, t in sends:
            try:
                p.instance.submit(t.argv, callback=lambda r, e, p=p, t=t: self._settled(p, t, r, e), **t.kwargs)
            except (FalkonError, ValueError) as e:
                self._settled(p, t, None, e)

    def _settled(self, part, task, result, error):
        with self._lock:
            if task not in part.tasks:
                # moved elsewhere by a failover: a result it had here still counts if it comes first,
                # but not the cancellation its move asked for, nor a failure
                take = error is None and result.status != "CANCELLED" and not task.future.done()
            else:
                take = None
                part.tasks.discard(task)
        if take is not None:
            if take:
                try:
                    task.future.set_result(result)
                except concurrent.futures.InvalidStateError:
                    pass  # its other run's result came first
            return
        with self._lock:
            part.held -= 1
            if error is None:
                done = (task, result, None)
            elif isinstance(error, ValueError) or getattr(error, "code", 0) == wire.INVALID_TASK:
                done = (task, None, error)  # the task's own fault: no dispatcher would take it
            elif self._closed:
                done = (task, None, FalkonError("the instance was closed"))
            elif task.sends >= MAX_SENDS:
                done = (task, None, FalkonError(f"sent to {task.sends} dispatchers without a result: {error}"))
            else:
                if part.instance._lost is not None:
                    part.dead = True
                self.resent += 1
                self._pending.appendleft(task)
                done = None
        if done is not None:
            t, r, e = done
            if not t.future.done():
                t.future.set_exception(e) if e is not None else t.future.set_result(r)
        self._pump()

    def _failover(self, member):
        """The dispatcher ``member`` is taken as lost: its unfinished tasks go to the others at once."""
        with self._lock:
            p = self._parts.pop(member.address, None)
            if p is None or self._closed:
                return
            p.dead = True
            self._moved_from.append(p)
            moved = [t for t in p.tasks if not t.future.done()]
            p.tasks.clear()
            p.held = 0
            for t in reversed(moved):
                self._pending.appendleft(t)
            self.resent += len(moved)
        p.instance._move_away()
        self._pump()

    def _back(self, member):
        """The lost dispatcher ``member`` answers again: its old part is destroyed (cancelling what moved,
        if it only hung), a new one joins."""
        with self._lock:
            old = [p for p in self._moved_from if p.member is member]
            self._moved_from = [p for p in self._moved_from if p.member is not member]
        for p in old:
            threading.Thread(target=_destroy_quietly, args=(p.instance,), daemon=True).start()

    def close(self):
        """Destroys the instance on every dispatcher; waiting tasks fail."""
        if self._closed:
            return
        self._closed = True
        for p in self._moved_from:  # a lost dispatcher may be hung: nobody waits for it
            threading.Thread(target=_destroy_quietly, args=(p.instance,), daemon=True).start()
        self._moved_from = []
        for p in list(self._parts.values()):
            try:
                p.instance.destroy()
            except (FalkonError, OSError):
                pass
        with self._lock:
            waiting = list(self._pending)
            self._pending.clear()
        for t in waiting:
            if not t.future.done():
                t.future.set_exception(FalkonError("the instance was closed before the task was sent"))
        self._owner._forget(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


FILE_PREFIX = "file:"


def _destroy_quietly(instance):
    try:
        instance.destroy()
    except (FalkonError, OSError):
        pass  # gone again: its lease ends it there


def _split(addresses):
    if isinstance(addresses, str):
        addresses = addresses.split(",")
    seen = []
    for a in addresses:
        a = a.strip()
        if a and a not in seen:
            seen.append(a)
    return seen

