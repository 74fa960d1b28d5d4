"""``FalkonExecutor``: Parsl apps as Falkon tasks.

* A ``bash_app`` becomes one task, ``/bin/bash -c COMMAND``, with no Python on the executor
  (:mod:`falkon.parsl.bash`).
* A ``python_app`` is serialised with Parsl's own serialisation and, by default, travels with its
  task to a *persistent worker* (docs/protocol.md section 9): a Python process each executor slot
  starts once, with Parsl imported, and keeps, so no process is started per call. Its result (or
  exception) comes back as the task's output; a call or a result too large for that goes through
  a file in the executor's work directory, which must then be visible to the executors (a shared
  file system, as on the clusters Falkon runs on, or this machine). With
  ``persistent_workers=False``, each call is a process of its own (``falkon-pyrun``, below).

Tasks run in the submitting process's working directory. ``walltime`` (an app keyword for bash
apps, or ``parsl_resource_specification={"walltime": seconds}`` for any app) becomes the task's
wall-time limit, ``"priority"`` (a whole number, default 0) the task's place in the
dispatcher's queue: higher starts first (docs/cli.md, "Priorities and fair share"), and ``"cores"``
(or ``"cpus"``, Slurm's word for them), ``"memory"`` and ``"disk"`` (MiB) what the task needs of one
executor: it goes only where all fit beside the tasks already there, and fails naming them when no
executor could ever hold it (docs/cli.md, "Tasks of several cores"). ``"gpus"`` (a whole number)
gives the task that many devices of one executor of its own, in ``CUDA_VISIBLE_DEVICES``, and
``"resources"`` (``{"license": 1}``) other named resources (docs/cli.md, "GPUs and other
resources"). Other keys are refused with Parsl's ``InvalidResourceSpecification``. Parsl's ``retries`` stay Parsl's (the DFK submits again), while Falkon itself
re-dispatches a task after framework failures (a lost executor) up to ``falkon_retries`` times.
Shutting down destroys the instance, which cancels every unfinished task.
"""

import itertools
import logging
import os
import shutil
import sys
import threading
from concurrent.futures import Future

from parsl.executors.base import ParslExecutor
from parsl.executors.errors import InvalidResourceSpecification
from parsl.serialize import deserialize
from parsl.utils import RepresentationMixin

from .. import wire
from ..client import Client, FalkonError
from ..local import LocalDispatcher
from . import _pyrun, bash
from ._serial import pack_call

logger = logging.getLogger(__name__)

RESOURCE_KEYS = {"walltime", "retries", "priority", "cores", "cpus", "memory", "disk", "gpus", "resources"}
_PYRUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_pyrun.py")
_RESIDENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_resident.py")
# a call larger than this goes through a file rather than with its task (frames are at most 16 MiB)
INLINE_CALL_BYTES = 8 * 1024 * 1024


def find_launcher(choice=None):
    """``falkon-pyrun``: ``choice``, beside the C executor of the ``falkon`` command, or on the PATH;
    None for the Python launcher (``choice="python"``, or none built)."""
    if choice == "python":
        return None
    if choice:
        return choice
    candidates = []
    falkon = os.environ.get("FALKON_BIN") or shutil.which("falkon")
    if falkon:
        repo = os.path.dirname(os.path.dirname(os.path.realpath(falkon)))
        candidates.append(os.path.join(repo, "executor-c", "target", "build", "falkon-pyrun"))
    candidates.append(shutil.which("falkon-pyrun"))
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def _unlink(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class TaskLost(Exception):
    """A Falkon task ended without running to completion (its executor was lost more often than
    Falkon retries, it was cancelled, or the Python worker died)."""


class FalkonExecutor(ParslExecutor, RepresentationMixin):
    """Runs Parsl apps on a Falkon dispatcher's executors.

    :param address: the dispatcher, ``host:port``; default ``$FALKON_DISPATCHER``; when neither is
        set, a dispatcher and ``local_executors`` executors (``local_slots`` slots each, default one
        per core) are started on this machine through the ``falkon`` command (``$FALKON_BIN``), as
        ``falkon run`` does, and stopped at shutdown
    :param token: the dispatcher's token; by default found as every Falkon client finds it
        (``token_file``, ``$FALKON_TOKEN``, ``$FALKON_TOKEN_FILE``, ``~/.falkon/token``)
    :param python: the interpreter that runs python_apps on the executors (default: this one)
    :param work_dir: where python_app payloads and results go (default: ``RUN_DIR/LABEL``); must be
        visible to the executors
    :param falkon_retries: re-dispatches after framework failures (default: the dispatcher's)
    :param persistent_workers: run python_apps in a persistent Python worker per executor slot
        (default), handed each call with its task; False: a process per call, as below
    :param use_zygote: run python_apps in a per-node pool of Python workers (fast) rather than a new
        interpreter per task
    :param launcher: the program each python_app task starts to reach that pool: ``falkon-pyrun``
        (built with the C executor; by default found beside the ``falkon`` command or on the PATH),
        or ``"python"`` for ``python -S _pyrun.py``
    """

    def __init__(self, label="falkon", address=None, token=None, token_file=None, local_executors=1,
                 local_slots=None, python=None, work_dir=None, falkon_retries=None, use_zygote=True,
                 launcher=None, storage_access=None, bundle_size=100, persistent_workers=True):
        super().__init__()
        self.label = label
        self.address = address
        self.token = token
        self.token_file = token_file
        self.local_executors = local_executors
        self.local_slots = local_slots
        self.python = python
        self.work_dir = work_dir
        self.falkon_retries = falkon_retries
        self.use_zygote = use_zygote
        self.persistent_workers = persistent_workers
        self.launcher = launcher
        self.storage_access = storage_access
        self.bundle_size = bundle_size
        self._local = None
        self._client = None
        self._instance = None
        self._ids = itertools.count()
        self._outstanding = 0
        self._lock = threading.Lock()

    # --- lifecycle ---

    def start(self):
        address = self.address or os.environ.get("FALKON_DISPATCHER")
        token = self.token
        if not address:
            self._local = LocalDispatcher(executors=self.local_executors, slots=self.local_slots,
                                          log_dir=os.path.join(self.run_dir, self.label, "falkon-logs"))
            address, token = self._local.address, self._local.token
        self._python = self.python or sys.executable
        self._socket = _pyrun.socket_path(self._python)
        self._launcher = find_launcher(self.launcher)
        self._dir = os.path.abspath(self.work_dir or os.path.join(self.run_dir, self.label))
        self._task_dir = os.path.join(self._dir, "tasks")
        os.makedirs(self._task_dir, exist_ok=True)
        self._client = Client(address, token=token, token_file=self.token_file, client_name=f"parsl-{self.label}",
                              bundle_size=self.bundle_size)
        self._instance = self._client.create_instance(f"parsl {self.run_id or ''}".strip())
        logger.info("Falkon executor %s: dispatcher %s, instance %x, work directory %s", self.label, address,
                    self._instance.id, self._dir)

    def shutdown(self):
        logger.info("Falkon executor %s shutting down", self.label)
        try:
            if self._instance is not None:
                self._instance.destroy()
        except FalkonError as e:
            logger.warning("destroying the instance: %s", e)
        if self._client is not None:
            self._client.close()
        if self._local is not None:
            self._local.stop()
        super().shutdown()

    def monitor_resources(self):
        return False  # Parsl's per-task resource monitor is not wired to Falkon's executors

    @property
    def outstanding(self):
        """Tasks submitted and not yet finished."""
        with self._lock:
            return self._outstanding

    # --- submission ---

    def submit(self, func, resource_specification, *args, **kwargs):
        resource_specification = resource_specification or {}
        unknown = set(resource_specification) - RESOURCE_KEYS
        if unknown:
            raise InvalidResourceSpecification(unknown, f"the Falkon executor understands {sorted(RESOURCE_KEYS)}")
        walltime = resource_specification.get("walltime")
        retries = resource_specification.get("retries", self.falkon_retries)
        priority = resource_specification.get("priority", 0)
        cores = resource_specification.get("cores", resource_specification.get("cpus"))
        if resource_specification.get("cpus", cores) != cores:
            raise InvalidResourceSpecification({"cores", "cpus"}, "\"cores\" and \"cpus\" name the same thing: "
                                               "state one, or both alike")
        memory = resource_specification.get("memory")
        disk = resource_specification.get("disk")
        gpus = resource_specification.get("gpus")
        named = resource_specification.get("resources")
        future = Future()
        n = next(self._ids)
        future.parsl_executor_task_id = n
        user_function = bash.bash_function(func)
        try:
            # a bad value fails this app's future, not the submitting thread
            wire.priority_ext(priority)
            wire.resources_ext(cores, memory)
            wire.disk_ext(disk)
            wire.named_resources_ext(gpus, named)
            worker = {}
            if user_function is not None:
                call = bash.format_call(user_function, args, kwargs)
                argv = ["/bin/bash", "-c", call.command]
                walltime = call.walltime if call.walltime is not None else walltime
                finish = call.outcome
            elif self.persistent_workers:
                argv, finish, worker = self._worker_task(n, func, args, kwargs)
            else:
                argv, finish = self._python_task(n, func, args, kwargs)
        except Exception as e:
            future.set_exception(e)
            return future
        with self._lock:
            self._outstanding += 1
        self._instance.submit(argv, cwd=os.getcwd(), walltime=walltime, retries=retries, priority=priority,
                              cores=cores, memory=memory, disk=disk, gpus=gpus, resources=named, **worker,
                              callback=lambda result, error: self._finish_one(result, error, future, finish))
        return future

    def _worker_task(self, n, func, args, kwargs):
        """A python_app for the persistent worker: the call travels with the task when it is at most
        INLINE_CALL_BYTES, else through a file; the result comes back as the task's stdout, or
        through a file when it is over the executor's output cap."""
        call = pack_call(func, args, kwargs)
        infile = os.path.join(self._task_dir, f"{n}.in")
        outfile = os.path.join(self._task_dir, f"{n}.out")
        through_file = len(call) > INLINE_CALL_BYTES
        if through_file:
            with open(infile, "wb") as f:
                f.write(call)
            call = b""
        name = getattr(func, "__name__", "?")

        def finish(result):
            # the common case touches no file: every system call here waits for the GIL again
            try:
                if result.status == "EXITED" and result.exit_code == 0:
                    if result.stdout and not result.flags & wire.FLAG_STDOUT_TRUNCATED:
                        return deserialize(result.stdout)  # a RemoteExceptionWrapper stays wrapped
                    try:
                        with open(outfile, "rb") as f:
                            return deserialize(f.read())
                    except FileNotFoundError:
                        pass
                return TaskLost(f"python_app {name} produced no result: Falkon task {result.status} exit "
                                f"{result.exit_code} {result.detail} "
                                f"{result.stderr.decode(errors='replace')[-2000:]}".rstrip())
            finally:
                if through_file:
                    _unlink(infile)
                if not result.stdout:
                    _unlink(outfile)

        argv = ["parsl-python-app", name, infile if through_file else "", outfile]
        return argv, finish, {"worker": [self._python, _RESIDENT], "payload": call}

    def _python_task(self, n, func, args, kwargs):
        infile = os.path.join(self._task_dir, f"{n}.in")
        outfile = os.path.join(self._task_dir, f"{n}.out")
        with open(infile, "wb") as f:
            f.write(pack_call(func, args, kwargs))
        if self.use_zygote and self._launcher:
            argv = [self._launcher, self._socket, self._python, _PYRUN, infile, outfile]
        elif self.use_zygote:
            argv = [self._python, "-S", _PYRUN, "--socket", self._socket, infile, outfile]
        else:
            argv = [self._python, "-m", "falkon.parsl.worker", "run", infile, outfile]

        def finish(result):
            try:
                if os.path.exists(outfile):
                    with open(outfile, "rb") as f:
                        return deserialize(f.read())  # a RemoteExceptionWrapper stays wrapped: the DFK re-raises it
                return TaskLost(f"python_app {getattr(func, '__name__', '?')} produced no result: Falkon task "
                                f"{result.status} exit {result.exit_code} {result.detail} "
                                f"{result.stderr.decode(errors='replace')[-2000:]}".rstrip())
            finally:
                for path in (infile, outfile):
                    try:
                        os.unlink(path)
                    except FileNotFoundError:
                        pass

        return argv, finish

    # --- completion: on the client's reader thread, as HTEX completes on its result thread (a hop to
    # another thread cost a GIL hand-off per task); Parsl launches dependants on its own pool ---

    def _finish_one(self, result, error, future, finish):
        try:
            outcome = TaskLost(str(error)) if error is not None else finish(result)
        except Exception as e:
            outcome = e
        with self._lock:
            self._outstanding -= 1
        if isinstance(outcome, BaseException):
            future.set_exception(outcome)
        else:
            future.set_result(outcome)
