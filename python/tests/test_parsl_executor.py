"""FalkonExecutor behaviour Parsl's own suite does not pin down: wall times, lost workers, resource specs,
shutdown. Needs Parsl (python/run-parsl-tests.sh runs this in its virtualenv); skipped without it."""

import os
import pathlib
import shutil
import tempfile
import time
import unittest

try:
    import parsl
    from parsl.app.errors import AppTimeout, BashExitFailure
    from parsl.config import Config
    from parsl.executors.errors import InvalidResourceSpecification
except ImportError:
    parsl = None

from falkon_test_support import FALKON, REPO


def apps():
    @parsl.bash_app
    def sleepy(seconds, walltime=None):
        return f"sleep {seconds}"

    @parsl.bash_app
    def exits(code, stdout=None, stderr=None):
        return f"echo out; echo err >&2; exit {code}"

    @parsl.python_app
    def slow_python(seconds, parsl_resource_specification=None):
        import time
        time.sleep(seconds)
        return "woke"

    @parsl.python_app
    def crash(code):
        import os
        os._exit(code)

    @parsl.python_app
    def where():
        import os
        return os.getcwd(), os.environ.get("FALKON_TEST_MARK")

    return sleepy, exits, slow_python, crash, where


@unittest.skipIf(parsl is None, "Parsl is not installed (python/run-parsl-tests.sh installs it)")
@unittest.skipUnless((REPO / "cli" / "target" / "falkon-cli.jar").is_file(), "Falkon is not built")
class FalkonExecutorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from falkon.parsl import FalkonExecutor
        os.environ["FALKON_BIN"] = FALKON
        os.environ.pop("FALKON_DISPATCHER", None)
        # the apps below are pickled by reference to this module: the workers (started with this
        # environment) must be able to import it, as any Parsl worker must import an app's module
        here = os.path.dirname(os.path.abspath(__file__))
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)
        cls.run_dir = tempfile.mkdtemp(prefix="falkon-parsl-test-")
        cls.executor = FalkonExecutor(label="falkon")
        cls.dfk = parsl.load(Config(executors=[cls.executor], run_dir=cls.run_dir, strategy="none"))
        cls.sleepy, cls.exits, cls.slow_python, cls.crash, cls.where = apps()

    @classmethod
    def tearDownClass(cls):
        cls.dfk.cleanup()
        shutil.rmtree(cls.run_dir, ignore_errors=True)

    def test_a_bash_app_past_its_walltime_is_killed_and_raises_app_timeout(self):
        start = time.monotonic()
        with self.assertRaises(AppTimeout):
            self.sleepy(30, walltime=0.5).result(60)
        self.assertLess(time.monotonic() - start, 20)

    def test_exit_status_and_stream_files(self):
        with tempfile.TemporaryDirectory() as d:
            out, err = os.path.join(d, "sub", "o.txt"), os.path.join(d, "e.txt")
            with self.assertRaises(BashExitFailure) as ctx:
                self.exits(3, stdout=out, stderr=err).result(60)
            self.assertEqual(3, ctx.exception.exitcode)
            self.assertEqual("out\n", pathlib.Path(out).read_text())
            self.assertTrue(pathlib.Path(err).read_text().endswith("err\n"))

    def test_a_python_app_past_its_walltime_is_killed_with_its_worker(self):
        from falkon.parsl import TaskLost
        start = time.monotonic()
        with self.assertRaises(TaskLost) as ctx:
            self.slow_python(60, parsl_resource_specification={"walltime": 1}).result(60)
        self.assertIn("TIMEOUT", str(ctx.exception))
        self.assertLess(time.monotonic() - start, 30)

    def test_a_python_worker_that_dies_is_reported_not_hung(self):
        from falkon.parsl import TaskLost
        with self.assertRaises(TaskLost) as ctx:
            self.crash(7).result(60)
        self.assertIn("exited (exit status 7) without answering", str(ctx.exception))

    def test_python_apps_run_in_the_submitters_directory_and_environment(self):
        os.environ["FALKON_TEST_MARK"] = "marked"  # the executors were started before: it cannot come from them
        try:
            cwd, mark = self.where().result(60)
        finally:
            del os.environ["FALKON_TEST_MARK"]
        self.assertEqual(os.path.realpath(os.getcwd()), os.path.realpath(cwd))
        self.assertIsNone(mark, "the task's environment is the executor's, as with every Falkon task")

    def test_a_priority_is_honoured_and_a_bad_one_fails_its_app_only(self):
        self.assertEqual("woke", self.slow_python(0, parsl_resource_specification={"priority": 7}).result(60))
        with self.assertRaises(ValueError) as ctx:
            self.slow_python(0, parsl_resource_specification={"priority": 2**40}).result(60)
        self.assertIn("priority", str(ctx.exception))

    def test_cores_and_memory_are_honoured_and_a_task_too_large_for_every_executor_fails_naming_them(self):
        self.assertEqual("woke", self.slow_python(0, parsl_resource_specification={"cores": 1, "memory": 1})
                         .result(60))
        with self.assertRaises(Exception) as ctx:
            self.slow_python(0, parsl_resource_specification={"cores": 4096}).result(60)
        self.assertIn("needs 4096 cores", str(ctx.exception))
        with self.assertRaises(ValueError) as ctx:
            self.slow_python(0, parsl_resource_specification={"cores": 0}).result(60)
        self.assertIn("cores", str(ctx.exception))

    def test_disk_and_cpus_are_honoured_and_a_task_wanting_more_disk_than_any_executor_has_fails_naming_it(self):
        self.assertEqual("woke", self.slow_python(0, parsl_resource_specification={"cpus": 1, "memory": 1,
                                                                                    "disk": 1}).result(60))
        with self.assertRaises(Exception) as ctx:
            self.slow_python(0, parsl_resource_specification={"disk": 2**32 - 1}).result(60)
        self.assertIn(f"{2**32 - 1} MiB of disk", str(ctx.exception))
        with self.assertRaises(InvalidResourceSpecification) as ctx:
            self.slow_python(0, parsl_resource_specification={"cores": 1, "cpus": 2}).result(60)
        self.assertEqual({"cores", "cpus"}, ctx.exception.invalid_keys)

    def test_resource_keys_it_cannot_honour_are_refused(self):
        with self.assertRaises(InvalidResourceSpecification) as ctx:
            self.slow_python(0, parsl_resource_specification={"cores": 1, "disk": 100, "gpus": 1, "mig": 2}).result(60)
        self.assertEqual({"mig"}, ctx.exception.invalid_keys)

    def test_gpus_are_asked_of_the_executors_and_a_task_no_executor_has_them_for_fails_naming_them(self):
        # these executors offer no GPU: the task is refused by the dispatcher, naming both sides
        with self.assertRaises(Exception) as ctx:
            self.slow_python(0, parsl_resource_specification={"gpus": 1}).result(60)
        self.assertIn("1 gpus", str(ctx.exception))
        with self.assertRaises(ValueError) as ctx:
            self.slow_python(0, parsl_resource_specification={"resources": {"Licence": 1}}).result(60)
        self.assertIn("Licence", str(ctx.exception))


def double(x):
    print("doubling", x)
    return 2 * x


def _stop_zygote(socket_path):
    """Ends the zygote serving ``socket_path`` (its workers leave when it does)."""
    import signal
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().split(b"\0")
        except OSError:
            continue
        if b"serve" in cmdline and socket_path.encode() in cmdline:
            try:
                os.kill(int(pid), signal.SIGTERM)
            except ProcessLookupError:
                pass


@unittest.skipIf(parsl is None, "Parsl is not installed (python/run-parsl-tests.sh installs it)")
class LauncherTest(unittest.TestCase):
    """One call through each launcher and the zygote, without Falkon: the result file, the task's
    streams, and a socket directory that is not private being refused."""

    def setUp(self):
        import sys
        from parsl.serialize import pack_apply_message
        from falkon.parsl import _pyrun
        from falkon.parsl.executor import _PYRUN, find_launcher
        self.python, self.script = sys.executable, _PYRUN
        self.launcher = find_launcher()
        self.dir = tempfile.mkdtemp(prefix="falkon-launcher-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.infile, self.outfile = os.path.join(self.dir, "t.in"), os.path.join(self.dir, "t.out")
        pathlib.Path(self.infile).write_bytes(pack_apply_message(double, (21,), {}))
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (os.path.dirname(os.path.abspath(__file__)), os.environ.get("PYTHONPATH")) if p)
        self.socket = _pyrun.socket_path(self.python)
        self.addCleanup(lambda: _stop_zygote(self.socket))  # a test run leaves nothing running

    def outcome(self, argv):
        import subprocess
        from parsl.serialize import deserialize
        p = subprocess.run(argv, capture_output=True, timeout=120)
        self.assertEqual(0, p.returncode, p.stderr)
        return deserialize(pathlib.Path(self.outfile).read_bytes()), p.stdout

    def test_the_python_launcher(self):
        value, out = self.outcome([self.python, "-S", self.script, "--socket", self.socket, self.infile, self.outfile])
        self.assertEqual(42, value)
        self.assertEqual(b"doubling 21\n", out)

    @unittest.skipUnless((REPO / "executor-c" / "target" / "build" / "falkon-pyrun").is_file(), "C launcher not built")
    def test_the_c_launcher(self):
        self.assertIsNotNone(self.launcher)
        for _ in range(3):  # the first may start the zygote; the others reach a pooled worker
            value, out = self.outcome([self.launcher, self.socket, self.python, self.script, self.infile,
                                       self.outfile])
            self.assertEqual(42, value)
            self.assertEqual(b"doubling 21\n", out)

    def test_no_worker_keeps_a_finished_calls_streams_open(self):
        """A worker forked for a call must not inherit the streams the zygote holds for it: its
        launcher's reader would wait for end of file until the worker leaves, a minute later."""
        import subprocess
        fresh = tempfile.mkdtemp(prefix="falkon-zygote-")
        self.addCleanup(shutil.rmtree, fresh, True)  # its zygote is stopped by its path, found in /proc
        self.socket = os.path.join(fresh, "fresh.sock")  # a zygote of its own
        p = subprocess.Popen([self.python, "-S", self.script, "--socket", self.socket, self.infile, self.outfile],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.addCleanup(p.stdout.close)
        self.assertEqual(0, p.wait(120))
        pipe = f"pipe:[{os.fstat(p.stdout.fileno()).st_ino}]"
        holders = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            if int(pid) == os.getpid():
                continue
            try:
                links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
            except OSError:
                continue  # gone, or not ours to read
            if pipe in links:
                holders.append(pid)
        self.assertEqual([], holders, "processes still holding the finished call's stdout")

    def test_a_socket_directory_others_can_write_is_never_used(self):
        shared = os.path.join(self.dir, "shared")
        os.mkdir(shared)
        os.chmod(shared, 0o777)
        planted = os.path.join(shared, "zygote.sock")
        import socket
        trap = socket.socket(socket.AF_UNIX)
        trap.bind(planted)
        trap.listen(1)
        trap.settimeout(0.5)
        self.addCleanup(trap.close)
        launchers = [[self.python, "-S", self.script, "--socket", planted, self.infile, self.outfile]]
        if self.launcher:
            launchers.append([self.launcher, planted, self.python, self.script, self.infile, self.outfile])
        for argv in launchers:
            value, _ = self.outcome(argv)  # the call runs in a fresh interpreter instead
            self.assertEqual(42, value)
            with self.assertRaises(socket.timeout):
                trap.accept()


if __name__ == "__main__":
    unittest.main()


class Point:
    """A class of this test module's own, which a worker can import by name."""

    def __init__(self, x):
        self.x = x

    def __eq__(self, other):
        return isinstance(other, Point) and other.x == self.x


@unittest.skipIf(parsl is None, "Parsl is not installed (python/run-parsl-tests.sh installs it)")
class SerialisationTest(unittest.TestCase):
    """The executor's calls and its workers' results: the C pickle where it means what dill means,
    dill otherwise, and Parsl's own reader taking both (falkon/parsl/_serial.py)."""

    def test_plain_data_is_pickled_and_parsl_reads_it(self):
        from parsl.serialize import deserialize
        from falkon.parsl._serial import PICKLE_HEADER, serialize_data
        for value in [(), ("",), {"a": [1, 2.5, None, b"x"]}, Point(3), {"parsl_resource_specification": {}}]:
            payload = serialize_data(value)
            self.assertTrue(payload.startswith(PICKLE_HEADER), value)
            self.assertEqual(value, deserialize(payload))

    def test_what_pickle_cannot_mean_the_same_goes_through_dill(self):
        import sys
        import types
        from parsl.serialize import deserialize
        from falkon.parsl._serial import PICKLE_HEADER, serialize_data
        # a class of the submitting program's __main__, as a script defines it: pickle finds it and
        # names it, but the worker's __main__ is another module, where the name leads nowhere
        main = sys.modules["__main__"]
        Local = types.new_class("FalkonSerialisationTestLocal", exec_body=lambda ns: ns.update(x=5))
        Local.__module__ = "__main__"
        setattr(main, Local.__name__, Local)
        self.addCleanup(delattr, main, Local.__name__)
        self.assertIn(b"__main__", __import__("pickle").dumps(Local()))
        for value, check in [(Local(), lambda v: v.x == 5),
                             (lambda v: v + 1, lambda f: f(1) == 2),  # pickle refuses a lambda
                             ("a string naming __main__", lambda s: s == "a string naming __main__")]:
            payload = serialize_data(value)
            self.assertFalse(payload.startswith(PICKLE_HEADER), value)
            self.assertTrue(check(deserialize(payload)), value)

    def test_a_packed_call_runs_as_parsl_runs_it(self):
        from parsl.executors.execute_task import execute_task
        from parsl.serialize import deserialize, unpack_apply_message
        from falkon.parsl._serial import pack_call, serialize_data
        call = pack_call(double, (21,), {})
        func, args, kwargs = unpack_apply_message(call)
        self.assertEqual(((21,), {}), (args, kwargs))
        self.assertEqual(42, deserialize(serialize_data(execute_task(call))))
