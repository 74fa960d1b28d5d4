"""Snakemake executor plugin for Falkon: ``snakemake --executor falkon --jobs N``.

Each job Snakemake hands over becomes one Falkon task of the workflow's instance: a plain shell
rule's formatted command runs as the task itself, any other job (``run:``, ``script:``, conda,
containers, groups, ...) runs Snakemake's own job command. Results come back on the client's
connection as they happen and are reported to Snakemake at once: nothing is polled.
docs/snakemake.md has the settings, the mapping of resources and what is not supported.
"""

import asyncio
import atexit
import os
import sys
import threading
from dataclasses import dataclass, field
from functools import partial
from typing import AsyncGenerator, List, Optional

from falkon import FalkonError
from snakemake_interface_common.exceptions import WorkflowError
from snakemake_interface_executor_plugins.executors.base import SubmittedJobInfo
from snakemake_interface_executor_plugins.executors.remote import RemoteExecutor
from snakemake_interface_executor_plugins.jobs import JobExecutorInterface
from snakemake_interface_executor_plugins.settings import CommonSettings, ExecutorSettingsBase

from .backend import Backend
from .tasks import task_resources, thread_environment, why_not_direct

STDERR_IN_ERROR = 4000  # the last characters of a failed task's stderr shown in Snakemake's log


def _setting(help, **kw):
    return field(metadata={"help": help, "env_var": False, "required": False}, **kw)


@dataclass
class ExecutorSettings(ExecutorSettingsBase):
    dispatcher: Optional[str] = _setting(
        "HOST:PORT of a running Falkon dispatcher (default: start one here with local executors, "
        "as falkon run does)", default=None)
    token_file: Optional[str] = _setting(
        "the dispatcher's token (default: $FALKON_TOKEN, $FALKON_TOKEN_FILE, ~/.falkon/token)", default=None)
    tls_ca: Optional[str] = _setting("a CA bundle (PEM): connect to --falkon-dispatcher over TLS", default=None)
    executors: int = _setting("local executors of the dispatcher started here (default: 1)", default=1)
    slots: Optional[int] = _setting("tasks each executor runs at once (default: its CPUs)", default=None)
    impl: Optional[str] = _setting("the executors: c or java (default: c where it is built)", default=None)
    provisioner: Optional[str] = _setting(
        "get executors from this batch scheduler (slurm, sge, pbs, ...; local for this machine) as jobs "
        "queue up, and give the nodes back when idle", default=None)
    max_nodes: int = _setting("with --falkon-provisioner: most nodes at once (default: 4)", default=4)
    idle: float = _setting("with --falkon-provisioner: idle seconds before a node is given back (default: 30)",
                           default=30.0)
    provision_args: Optional[str] = _setting(
        "with --falkon-provisioner: more options for falkon provision, as one string", default=None)
    always_job_command: bool = _setting(
        "run every job through Snakemake's job command, plain shell rules too (default: their command "
        "runs as the task itself)", default=False)
    bin: Optional[str] = _setting("the falkon command (default: $FALKON_BIN, else falkon on the PATH)",
                                  default=None)


common_settings = CommonSettings(
    non_local_exec=True,
    implies_no_shared_fs=False,
    job_deploy_sources=False,
    pass_default_storage_provider_args=True,
    pass_default_resources_args=True,
    pass_envvar_declarations_to_cmd=True,
    auto_deploy_default_storage_provider=False,
    init_seconds_before_status_checks=0,
)


class Executor(RemoteExecutor):
    def __post_init__(self):
        self.settings = self.workflow.executor_settings or ExecutorSettings()
        self._finished = set()  # ids of the SubmittedJobInfo reported, until the status loop drops them
        self._deployment = {m.name for m in self.workflow.deployment_settings.deployment_method}
        self._workdir = self.workflow.workdir_init
        self._backend = None
        self._backend_lock = threading.Lock()
        # whatever way Snakemake ends (it does not always call shutdown: "Nothing to be done"),
        # nothing started here outlives it
        atexit.register(self._close_backend)

    @property
    def backend(self):
        """The dispatcher and instance, started with the first job: a run with nothing to do starts nothing."""
        with self._backend_lock:
            if self._backend is None:
                log_dir = os.path.join(self._workdir, ".snakemake", "falkon")
                try:
                    self._backend = Backend(self.settings, log_dir, on_failure=self._backend_failed)
                except (OSError, RuntimeError, ValueError, FalkonError) as e:
                    raise WorkflowError(f"falkon executor: {e}") from e
            return self._backend

    def _close_backend(self):
        with self._backend_lock:
            backend, self._backend = self._backend, None
        if backend is not None:
            backend.close()

    def _backend_failed(self, message):
        self.workflow.scheduler.executor_error_callback(WorkflowError(message))

    # --- submitting ---

    def run_job(self, job: JobExecutorInterface):
        info = SubmittedJobInfo(job=job)
        res = task_resources(job.threads, job.resources, getattr(job, "priority", 0), self.backend.max_cores)
        env = dict(self.envvars())
        argv = self._direct_argv(job, env, res["cores"])
        direct = argv is not None
        if not direct:
            argv = ["/bin/sh", "-c", self.format_job_exec(job)]
        # reported before the task is sent: its result may come back before submit returns
        self.report_job_submission(info)
        try:
            self.backend.instance.submit(
                argv, env=env, cwd=self._workdir, walltime=res["walltime"],
                # a one-thread job states no cores: an executor that pins its slots confines a task
                # that states them to its CPUs, and a one-thread rule's pipe (bwa | samtools) then
                # shares one CPU where Snakemake's local runs let it spread
                cores=res["cores"] if res["cores"] > 1 else None,
                memory=res["memory"], disk=res["disk"], priority=res["priority"], gpus=res["gpus"],
                callback=partial(self._task_finished, info, direct))
        except Exception as e:  # a spec Falkon refuses, a lost dispatcher: this job fails, others go on
            self._report(info, None, e)

    def _direct_argv(self, job, env, cores):
        """The task's argv when the job's formatted shell command can run as it, else None."""
        why = "--falkon-always-job-command" if self.settings.always_job_command else why_not_direct(
            job, self._deployment, self.workflow.workflow_settings.cache is not None)
        if why is not None:
            self.logger.debug(f"falkon: job {job.jobid} runs Snakemake's job command: {why}")
            return None
        from snakemake.shell import shell
        executable = job.resources.get("shell_exec") or shell.get_executable() or "/bin/sh"
        try:  # as snakemake.shell builds it: bash gets "set -euo pipefail; " unless a prefix is set
            prefix, suffix = shell._get_process_prefix(executable), shell._process_suffix
        except AttributeError:
            prefix = "set -euo pipefail; " if os.path.basename(executable) == "bash" else ""
            suffix = ""
        command = " ".join((prefix, job.shellcmd, suffix)).strip()
        if len(command) > self.backend.client.max_task_bytes // 2:
            return None  # Snakemake's job command writes such a command to a script
        # what Snakemake does before it runs a job itself: output and log directories made,
        # incomplete outputs of an earlier run removed, inputs awaited
        self.workflow.async_run(job.prepare())
        # the thread variables say what the task gets: its slots, threads capped at an executor's
        env.update(thread_environment(cores, job.resources.get("tmpdir")))
        return [executable, "-c", command]

    # --- results, on the client's reader thread ---

    def _task_finished(self, info, direct, result, error):
        if direct and result is not None:
            # a shell rule's output goes where Snakemake's own runs put it: this process's streams
            if result.stdout:
                sys.stdout.buffer.write(result.stdout)
                sys.stdout.flush()
            if result.stderr:
                sys.stderr.buffer.write(result.stderr)
                sys.stderr.flush()
        self._report(info, result, error)

    def _report(self, info, result, error):
        with self.lock:
            self._finished.add(id(info))
        if error is None and result.ok:
            self.report_job_success(info)
            return
        if error is not None:
            msg = f"Falkon could not run the job: {error}"
        else:
            why = f" ({result.detail})" if result.detail else ""
            msg = f"Falkon task {result.task_id} ended {result.status}, exit status {result.exit_code}{why}"
            tail = result.stderr[-STDERR_IN_ERROR:].decode("utf-8", "replace").rstrip()
            if tail:
                msg += f"; its stderr ends:\n{tail}"
        self.report_job_error(info, msg=msg + "\n")

    async def check_active_jobs(self, active_jobs: List[SubmittedJobInfo]) -> AsyncGenerator[SubmittedJobInfo, None]:
        # results are reported as they arrive (_report): this only drops the reported jobs from
        # Snakemake's list of active ones, asking no one anything
        for info in active_jobs:
            with self.lock:
                if id(info) in self._finished:
                    self._finished.discard(id(info))
                    continue
            yield info

    async def sleep(self):
        # the status loop has nothing to poll, whatever --seconds-between-status-checks says: it
        # neither spins (0 s) nor holds up the end of the run (shutdown waits for it) for long
        await asyncio.sleep(0.5)

    # --- ending ---

    def cancel_jobs(self, active_jobs: List[SubmittedJobInfo]):
        # the instance holds this workflow's tasks only: ending it stops every queued and running one
        if self._backend is not None:
            self._backend.cancel()

    def shutdown(self):
        super().shutdown()
        self._close_backend()
