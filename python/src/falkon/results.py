"""What a task comes back with, and how its caller is told: a :class:`Result`, or a
:class:`FalkonError` when it cannot have run (shared by the client's parts)."""

import logging
from concurrent.futures import Future

from . import wire

log = logging.getLogger("falkon.client")


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


class _Pending:
    """A task submitted and not yet finished."""
    __slots__ = ("spec", "future")

    def __init__(self, spec, future):
        self.spec = spec
        self.future = future


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
