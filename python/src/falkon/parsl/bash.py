"""``bash_app`` calls as plain Falkon tasks: no Python on the executor.

Parsl runs a bash_app by shipping a wrapper (``remote_side_bash_executor``) to a Python worker,
which calls the app's function to get a command line, opens the ``stdout``/``stderr`` files,
runs the command with ``/bin/bash`` and turns its exit status into ``BashExitFailure``,
``AppTimeout`` or ``MissingOutputs``. Here the cheap part (formatting the command, opening the
stream files) happens in the submitting process, with Parsl's own error types, and only the
command itself becomes a Falkon task: ``/bin/bash -c`` with its streams appended to those files
and the app's ``walltime`` as the task's wall-time limit. That needs the files to be visible to
the executors, which is what Parsl assumes of a bash_app's ``stdout``/``stderr`` paths too.
"""

import functools
import os
import shlex

import parsl.app.errors as pe
from parsl.app.bash import remote_side_bash_executor
from parsl.data_provider.files import File
from parsl.utils import get_std_fname_mode


def bash_function(func):
    """The user's bash_app function if ``func`` is exactly Parsl's bash wrapper around it, else None
    (a wrapper added on top, e.g. by in-task staging, must run as Python on the executor)."""
    inner = getattr(func, "__wrapped__", None)
    if isinstance(inner, functools.partial) and inner.func is remote_side_bash_executor and inner.args:
        return inner.args[0]
    return None


class BashCall:
    """A formatted bash_app call: what to run and how to judge its outcome."""

    def __init__(self, name, command, walltime, outputs):
        self.name = name
        self.command = command
        self.walltime = walltime
        self.outputs = outputs

    def outcome(self, result):
        """Parsl's value or exception for a task's final :class:`falkon.Result`."""
        if result.status == "TIMEOUT":
            return pe.AppTimeout(f"App {self.name} exceeded walltime: {self.walltime} seconds")
        if result.status != "EXITED":
            return pe.AppException(f"App {self.name} caught exception",
                                   RuntimeError(f"Falkon task {result.status}: {result.detail}"))
        if result.exit_code != 0:
            return pe.BashExitFailure(self.name, result.exit_code)
        missing = [f for f in self.outputs if not os.path.exists(f.filepath)]
        if missing:
            return pe.MissingOutputs(f"Missing outputs from app {self.name}", missing)
        return 0


def _open_stream(kwargs, fdname):
    """Creates (or truncates, as its mode says) a stream file as Parsl's worker would; its path, or None."""
    spec = kwargs.get(fdname)
    if spec is None:
        return None
    if isinstance(spec, File):
        fname, mode = spec.filepath, "w"
    else:
        fname, mode = get_std_fname_mode(fdname, spec)
    try:
        if os.path.dirname(fname):
            os.makedirs(os.path.dirname(fname), exist_ok=True)
        with open(fname, mode):
            pass
    except Exception as e:
        raise pe.BadStdStreamFile(str(fname)) from e
    return os.path.abspath(fname)


def format_call(func, args, kwargs):
    """Calls the app's function for its command line and prepares its stream files.

    :raises: the exceptions Parsl's worker would raise for a bad command or stream file
    """
    name = getattr(func, "__name__", "bash_app")
    command = None
    try:
        command = func(*args, **kwargs)
        if not isinstance(command, str):
            raise ValueError(f"Expected a str for bash_app commandline, got {type(command)}")
    except AttributeError as e:
        if command is not None:
            raise pe.AppBadFormatting(f"App formatting failed for app '{name}' with AttributeError: {e}")
        raise pe.BashAppNoReturn(f"Bash app '{name}' did not return a value, or returned None - with this "
                                 f"exception: {e}")
    except IndexError as e:
        raise pe.AppBadFormatting(f"App formatting failed for app '{name}' with IndexError: {e}")

    out = _open_stream(kwargs, "stdout")
    err = _open_stream(kwargs, "stderr")
    if err is not None:
        with open(err, "a") as f:
            f.write(f"--> executable follows <--\n{command}\n--> end executable <--\n")
    redirect = ""
    if out is not None:
        redirect += f" >>{shlex.quote(out)}"
    if err is not None:
        redirect += f" 2>>{shlex.quote(err)}"
    script = f"exec{redirect}\n{command}" if redirect else command
    return BashCall(name, script, kwargs.get("walltime"), list(kwargs.get("outputs", [])))
