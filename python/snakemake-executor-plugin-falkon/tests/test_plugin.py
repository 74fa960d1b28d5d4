"""The plugin's own tests, through Snakemake's command line as a user runs it: a failing job, a
cancelled run, resources honoured, the three ways to run (embedded, a running dispatcher, a
provisioner), both ways a job runs (its shell command as the task, Snakemake's job command) and a
2,000-job workflow. Needs FALKON_BIN (bin/falkon of a built checkout)."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from falkon import LocalDispatcher
from snakemake_executor_plugin_falkon.tasks import task_resources, thread_environment


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip())


def snakemake_cmd(workdir, *args, jobs=10):
    return [sys.executable, "-m", "snakemake", "--executor", "falkon", "--jobs", str(jobs), "--directory",
            str(workdir), "--snakefile", str(workdir / "Snakefile"), "--nocolor", *args]


def snakemake(workdir, *args, jobs=10, env=None, timeout=600):
    """Runs Snakemake in a session of its own; once it has exited, nothing it started may be left."""
    p = subprocess.Popen(snakemake_cmd(workdir, *args, jobs=jobs), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        await_condition("nothing left of the run", lambda: not in_session(p.pid), 60)
    finally:
        for pid in in_session(p.pid):
            os.kill(pid, signal.SIGKILL)
        if p.poll() is None:
            p.kill()
            p.wait()
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for our purpose (its parent has not reaped it yet)
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


def in_session(sid):
    """Processes (not zombies) whose session is ``sid``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                found.append(int(entry))
    return found


def await_condition(what, check, timeout=120):
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.05)


# --- the mapping, on its own ---

def test_resources_map_to_falkon_fields():
    r = task_resources(4, {"mem_mb": 1000, "disk_mib": 2048, "runtime": 3}, priority=5)
    assert r == {"cores": 4, "memory": 954, "disk": 2048, "walltime": 180, "priority": 5, "gpus": None}
    # mem_mib wins over mem_mb; nothing stated stays unstated
    assert task_resources(1, {"mem_mib": 10, "mem_mb": 99999})["memory"] == 10
    assert task_resources(1, {}) == {"cores": 1, "memory": None, "disk": None, "walltime": None, "priority": 0,
                                     "gpus": None}
    assert task_resources(1, {"gpus": 2})["gpus"] == 2
    assert task_resources(1, {"gpu": 1})["gpus"] == 1
    # threads above every executor's slots are capped (such a task would never start); --prioritize
    # gives sys.maxsize, clamped into Falkon's 32-bit field
    assert task_resources(8, {}, max_cores=2)["cores"] == 2
    assert task_resources(1, {}, priority=sys.maxsize)["priority"] == 2**31 - 1
    # a size string Snakemake did not evaluate into *_mb is not guessed at
    assert task_resources(1, {"mem": "5MB"})["memory"] is None
    with pytest.raises(ValueError, match="mem_mb"):
        task_resources(1, {"mem_mb": -1})


def test_thread_environment_is_what_snakemake_shell_sets():
    env = thread_environment(3, "/scratch/t")
    assert env["OMP_NUM_THREADS"] == env["MKL_NUM_THREADS"] == "3"
    assert env["TMPDIR"] == env["TEMP"] == "/scratch/t"
    assert "TMPDIR" not in thread_environment(1)


# --- workflows through the command line ---

def test_a_failed_jobs_exit_status_and_stderr_reach_snakemakes_log(tmp_path):
    write(tmp_path / "Snakefile", """
        rule all:
            input: "good.txt", "bad.txt"
        rule good:
            output: "good.txt"
            shell: "echo fine > {output}"
        rule bad:
            output: "bad.txt"
            shell: "echo half > {output}; echo 'the reference is missing' >&2; exit 3"
        """)
    p = snakemake(tmp_path, "--keep-going")
    assert p.returncode != 0
    log = p.stdout + p.stderr
    assert "exit status 3" in log and "the reference is missing" in log, log
    assert (tmp_path / "good.txt").read_text() == "fine\n"
    # Snakemake removes a failed job's output as it does locally
    assert not (tmp_path / "bad.txt").exists()


def test_resources_are_honoured_and_both_kinds_of_job_run(tmp_path):
    # one executor of 2 slots: two 2-thread jobs can never overlap (mkdir fails if the other holds the
    # lock); a 16-thread job takes the 2 slots instead of never starting; the run: block goes
    # through Snakemake's job command
    write(tmp_path / "Snakefile", """
        rule all:
            input: expand("wide/{i}.txt", i=range(2)), "huge.txt", "py.txt"
        rule wide:
            output: "wide/{i}.txt"
            threads: 2
            resources: mem_mb=100
            shell: "mkdir lock.d && sleep 0.5 && rmdir lock.d && echo $OMP_NUM_THREADS > {output}"
        rule huge:
            output: "huge.txt"
            threads: 16
            shell: "echo {threads} $OMP_NUM_THREADS > {output}"
        rule py:
            output: "py.txt"
            run:
                with open(output[0], "w") as f:
                    f.write(f"python {threads}\\n")
        """)
    p = snakemake(tmp_path, "--falkon-executors", "1", "--falkon-slots", "2")
    assert p.returncode == 0, p.stdout + p.stderr
    for i in range(2):
        assert (tmp_path / f"wide/{i}.txt").read_text() == "2\n"
    # {threads} is Snakemake's (--max-threads caps it); the task's slots and thread variables are what it got
    assert (tmp_path / "huge.txt").read_text() == "16 2\n"
    assert (tmp_path / "py.txt").read_text() == "python 1\n"
    # a rerun finds everything done and starts nothing
    again = snakemake(tmp_path, "--falkon-executors", "1", "--falkon-slots", "2")
    assert again.returncode == 0 and "Nothing to be done" in again.stdout + again.stderr


def test_ctrl_c_cancels_queued_and_running_jobs_and_leaves_nothing_running(tmp_path):
    write(tmp_path / "Snakefile", """
        rule all:
            input: expand("slow/{i}.txt", i=range(6))
        rule slow:
            output: "slow/{i}.txt"
            shell: "echo $$ > pid.{wildcards.i}; exec sleep 600"
        """)
    p = subprocess.Popen(snakemake_cmd(tmp_path, "--falkon-executors", "1", "--falkon-slots", "2"),
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
                         stdin=subprocess.DEVNULL,
                         # as at a terminal, even where this test was started with SIGINT ignored
                         # (a script's background job): Python ignores it too if it starts ignored
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        # a pid file exists from the shell's redirection on, its line only once echo has written it
        await_condition("two jobs running, their pids written",
                        lambda: [f.read_text()[-1:] for f in tmp_path.glob("pid.*")] == ["\n", "\n"])
        pids = [int(f.read_text()) for f in tmp_path.glob("pid.*")]
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode != 0, out
    await_condition("the running jobs' processes gone", lambda: not any(alive(pid) for pid in pids), 60)
    # the queued jobs never ran, and nothing the run started (dispatcher, executors) is left
    assert len(list(tmp_path.glob("pid.*"))) == 2
    await_condition("nothing left of the run", lambda: not in_session(p.pid), 60)
    assert not list(tmp_path.glob("slow/*.txt"))


def test_a_running_dispatcher(tmp_path):
    write(tmp_path / "Snakefile", """
        rule all:
            input: expand("out/{i}.txt", i=range(20))
        rule one:
            output: "out/{i}.txt"
            shell: "echo {wildcards.i} > {output}"
        """)
    with LocalDispatcher(executors=2, slots=1, log_dir=str(tmp_path / "logs")) as d:
        env = dict(os.environ, FALKON_TOKEN=d.token)
        p = snakemake(tmp_path, "--falkon-dispatcher", d.address, env=env)
        assert p.returncode == 0, p.stdout + p.stderr
        assert d.dispatcher.poll() is None  # the run used it and left it serving
    assert sorted(int((tmp_path / f"out/{i}.txt").read_text()) for i in range(20)) == list(range(20))
    # a wrong token is refused with a clear error, nothing runs
    write(tmp_path / "Snakefile", """
        rule x:
            output: "x.txt"
            shell: "touch {output}"
        """)
    with LocalDispatcher(executors=1, log_dir=str(tmp_path / "logs2")) as d:
        p = snakemake(tmp_path, "--falkon-dispatcher", d.address, env=dict(os.environ, FALKON_TOKEN="0" * 64))
    assert p.returncode != 0
    assert "refused the connection" in p.stdout + p.stderr
    assert not (tmp_path / "x.txt").exists()


def test_executors_from_a_provisioner(tmp_path):
    # the local provisioner (executors as processes on this machine) stands for a batch scheduler;
    # benchmarks/snakemake runs the same with --falkon-provisioner slurm on the real Slurm
    write(tmp_path / "Snakefile", """
        rule all:
            input: expand("out/{i}.txt", i=range(10))
        rule one:
            output: "out/{i}.txt"
            shell: "echo {wildcards.i} > {output}"
        """)
    p = snakemake(tmp_path, "--falkon-provisioner", "local", "--falkon-max-nodes", "1", "--falkon-slots", "2")
    assert p.returncode == 0, p.stdout + p.stderr
    assert all((tmp_path / f"out/{i}.txt").read_text() == f"{i}\n" for i in range(10))
    assert "provision.log" in os.listdir(tmp_path / ".snakemake" / "falkon")


def test_a_2000_job_workflow(tmp_path):
    write(tmp_path / "Snakefile", """
        N = 2000
        rule all:
            input: "all.txt"
        rule gather:
            input: expand("parts/{i}.txt", i=range(N))
            output: "all.txt"
            shell: "cat parts/*.txt | sort -n > {output}"
        rule part:
            output: "parts/{i}.txt"
            shell: "echo {wildcards.i} > {output}"
        """)
    p = snakemake(tmp_path, "--falkon-executors", "2", jobs=500, timeout=900)
    assert p.returncode == 0, (p.stdout + p.stderr)[-4000:]
    assert (tmp_path / "all.txt").read_text().split() == [str(i) for i in range(2000)]
