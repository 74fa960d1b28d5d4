"""The Python client against a live dispatcher and real executors (bin/falkon of this checkout)."""

import concurrent.futures
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

from falkon import Client, FalkonError, LocalDispatcher
from falkon.token import find_token

from falkon_test_support import BUILT, FALKON, stop, wait_for


@unittest.skipUnless(BUILT, "Falkon is not built (run the README's build first)")
class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.logs = tempfile.mkdtemp(prefix="falkon-pytest-")
        cls.local = LocalDispatcher(executors=2, slots=2, falkon=FALKON, log_dir=cls.logs)

    @classmethod
    def tearDownClass(cls):
        cls.local.stop()
        shutil.rmtree(cls.logs, ignore_errors=True)

    def client(self, **kw):
        c = Client(self.local.address, token=self.local.token, **kw)
        self.addCleanup(c.close)
        return c

    def test_tasks_run_and_their_results_come_back(self):
        with self.client().create_instance("results") as inst:
            futures = [inst.submit(["/bin/sh", "-c", f"echo out-{i}; echo err-{i} >&2; exit {i % 3}"])
                       for i in range(300)]
            results = [f.result(60) for f in futures]
        for i, r in enumerate(results):
            self.assertEqual("EXITED", r.status)
            self.assertEqual(i % 3, r.exit_code)
            self.assertEqual(f"out-{i}\n".encode(), r.stdout)
            self.assertEqual(f"err-{i}\n".encode(), r.stderr)
            self.assertEqual(r.exit_code == 0, r.ok)
            self.assertTrue(r.executor_id)
        self.assertEqual(len(results), len({r.task_id for r in results}))

    def test_environment_directory_and_wall_time(self):
        with tempfile.TemporaryDirectory() as d, self.client().create_instance() as inst:
            env = inst.submit(["/bin/sh", "-c", 'printf "%s" "$GREETING"'], env={"GREETING": "hi there"})
            cwd = inst.submit(["/bin/pwd"], cwd=d)
            slow = inst.submit(["/bin/sleep", "30"], walltime=0.3)
            missing = inst.submit(["/no/such/program"], retries=0)
            self.assertEqual(b"hi there", env.result(30).stdout)
            self.assertEqual(os.path.realpath(d), os.path.realpath(cwd.result(30).stdout.decode().strip()))
            self.assertEqual("TIMEOUT", slow.result(30).status)
            self.assertEqual("LAUNCH_FAILED", missing.result(30).status)
            self.assertIn("/no/such/program", missing.result().detail)

    def test_a_workflow_waits_for_its_tasks_and_a_failure_stops_what_needs_it(self):
        with self.client().create_instance("workflow") as inst:
            first = inst.submit(["/bin/sh", "-c", "sleep 0.2; echo first"], name="first")
            second = inst.submit(["/bin/echo", "second"], name="second", after=["first"])
            broken = inst.submit(["/bin/sh", "-c", "exit 7"], name="broken")
            never = inst.submit(["/bin/echo", "never"], name="never", after=["second", "broken"])
            r1, r2, rb, rn = (f.result(60) for f in (first, second, broken, never))
        self.assertTrue(r1.ok and r2.ok)
        self.assertGreaterEqual(r2.started_micros, r1.finished_micros, "second starts after first finished")
        self.assertEqual(7, rb.exit_code)
        self.assertEqual("DEPENDENCY_FAILED", rn.status)
        self.assertEqual((rb.task_id, "after:broken"), rn.dependency)
        self.assertEqual(b"", rn.stdout)
        with self.assertRaises(ValueError):
            self.client().create_instance().submit(["/bin/true"], name="")

    def test_tasks_sent_alone_and_in_bundles_keep_their_order(self):
        """A task submitted on its own goes out from the submitting thread, tasks close together in
        the sender's bundles: each chain names the task before it (which the dispatcher must have
        received first), from four threads at once, pausing now and then so both paths are taken."""
        import threading
        with self.client().create_instance("order") as inst:
            futures = []

            def chain(k):
                for i in range(60):
                    futures.append(inst.submit(["/bin/true"], name=f"c{k}-{i}", after=[f"c{k}-{i - 1}"] if i else ()))
                    if i % 7 == 0:
                        time.sleep(0.002)

            threads = [threading.Thread(target=chain, args=(k,)) for k in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            results = [f.result(60) for f in futures]
        self.assertEqual(240, len(results))
        self.assertTrue(all(r.ok for r in results), [r.detail for r in results if not r.ok][:3])

    def test_an_invalid_task_fails_alone_and_names_itself(self):
        with self.client().create_instance() as inst:
            good = [inst.submit(["/bin/echo", str(i)]) for i in range(5)]
            bad = inst.submit_spec({"argv": ["/bin/true"], "env": {"A=B": "x"}, "workDir": "", "wallTimeMillis": 0,
                                    "ext": []})
            more = [inst.submit(["/bin/echo", str(i)]) for i in range(5)]
            with self.assertRaisesRegex(FalkonError, r"INVALID_TASK: task \d+ of the bundle .*env\[0\] has an invalid variable name") as ctx:
                bad.result(30)
            self.assertEqual(11, ctx.exception.code)
            self.assertTrue(all(f.result(30).ok for f in good + more))

    def test_bad_input_is_refused_in_the_callers_thread(self):
        with self.client().create_instance() as inst:
            with self.assertRaisesRegex(ValueError, "argv"):
                inst.submit([])
            with self.assertRaisesRegex(ValueError, "not a valid variable name"):
                inst.submit(["/bin/true"], env={"": "x"})
            with self.assertRaisesRegex(ValueError, "over the limit"):
                inst.submit(["/bin/echo", "x" * (2 * 1024 * 1024)])

    def test_a_wrong_token_is_refused(self):
        with self.assertRaisesRegex(FalkonError, "UNAUTHORIZED") as ctx:
            Client(self.local.address, token="not-the-token", reconnect_for=0)
        self.assertEqual(3, ctx.exception.code)

    def test_status_documents(self):
        c = self.client()
        wait_for(lambda: c.status()["executors"]["registered"] == 2, what="two executors")
        with c.create_instance("status-test") as inst:
            inst.submit(["/bin/true"]).result(30)
            s = inst.status()
            self.assertEqual("status-test", s["name"])
            self.assertEqual(1, s["completed"])

    def test_results_are_acknowledged_in_batches_and_on_close(self):
        # with a lease the dispatcher keeps each result until it is acknowledged; the client does it
        # in batches (every ACK_EVERY results, or ACK_DELAY_SECONDS after one arrives), not per result
        import falkon._connection as connection
        c = self.client()
        acks = []
        write = c._write
        c._write = lambda msg: (acks.append(msg["upToSeq"]) if msg["type"] == "ACK" else None, write(msg))[1]
        inst = c.create_instance("acks", lease_seconds=60)
        futures = [inst.submit(["/bin/true"]) for _ in range(connection.ACK_EVERY + 100)]
        for f in futures:
            f.result(60)
        wait_for(lambda: inst.status()["unacknowledged"] == 0, what="every result acknowledged")
        self.assertEqual(len(futures), acks[-1])
        self.assertEqual(sorted(acks), acks)  # cumulative: each ACK covers all before it

        # the last results, still waiting for the delay, are acknowledged when the client closes
        connection_delay, connection.ACK_DELAY_SECONDS = connection.ACK_DELAY_SECONDS, 3600
        self.addCleanup(setattr, connection, "ACK_DELAY_SECONDS", connection_delay)
        c2 = Client(self.local.address, token=self.local.token)
        self.addCleanup(c2.close)  # closing twice is harmless
        inst2 = c2.create_instance("acks-on-close", lease_seconds=60)
        inst2.submit(["/bin/true"]).result(60)
        self.assertEqual(1, inst2.status()["unacknowledged"])
        c2.close()
        # the ACK and the other connection's request may reach the scheduler in either order
        other = self.client()
        wait_for(lambda: next(r for r in other.status()["instanceList"]
                              if r["instance"] == f"{inst2.id:x}")["unacknowledged"] == 0,
                 what="the result acknowledged by close()")

    def test_max_in_flight_bounds_unfinished_tasks(self):
        c = self.client(max_in_flight=8, bundle_size=4)
        with c.create_instance() as inst:
            seen = []
            futures = []
            for i in range(40):
                futures.append(inst.submit(["/bin/echo", str(i)]))
                seen.append(inst.unfinished())
            self.assertTrue(all(f.result(60).ok for f in futures))
            self.assertLessEqual(max(seen), 8)

    def test_destroy_cancels_unfinished_tasks(self):
        with self.client().create_instance() as inst:
            futures = [inst.submit(["/bin/sleep", "30"]) for _ in range(20)]
            wait_for(lambda: inst.status()["running"] > 0, what="a running task")
            cancelled = inst.destroy()
        self.assertEqual(20, cancelled)
        for f in futures:
            try:
                r = f.result(30)
                self.assertEqual("CANCELLED", r.status)
            except FalkonError as e:
                self.assertIn("destroyed", str(e))

    def test_gpus_and_named_resources_reach_the_task(self):
        # devices given by hand: no GPU is needed, and none is touched
        with LocalDispatcher(executors=1, slots=2, falkon=FALKON,
                             extra_executor_args=["--resource", "gpus=0,1", "--resource", "license=1"]) as local, \
                Client(local.address, token=local.token) as c, c.create_instance() as inst:
            probe = 'echo "$CUDA_VISIBLE_DEVICES|$FALKON_RESOURCE_GPUS|${FALKON_RESOURCE_LICENSE-none}"'
            two = inst.submit(["/bin/sh", "-c", probe], gpus=2, resources={"license": 1}).result(60)
            self.assertTrue(two.ok, two)
            self.assertEqual("0,1|0,1|1", two.stdout.decode().strip())
            plain = inst.submit(["/bin/sh", "-c", probe]).result(60)
            self.assertEqual("||none", plain.stdout.decode().strip(), "a task asking none is shown no GPU")
            too_many = inst.submit(["/bin/true"], gpus=3).result(60)
            self.assertEqual("REJECTED", too_many.status)
            self.assertIn("needs 1 core, 3 gpus of one executor", too_many.detail)
            self.assertIn("2 gpus, 1 license", too_many.detail)

    def test_single_tasks_are_cancelled_and_the_instance_goes_on(self):
        # a dispatcher of its own: 2 slots, so that which tasks run and which wait is known
        with LocalDispatcher(executors=1, slots=2, falkon=FALKON) as local, \
                Client(local.address, token=local.token) as c, c.create_instance() as inst:
            sleepers = [inst.submit(["/bin/sleep", "30"]) for _ in range(4)]
            wait_for(lambda: inst.status()["running"] == 2, what="two running tasks")
            # one running and one queued
            self.assertEqual(2, inst.cancel(sleepers[0], sleepers[3]))
            for f in (sleepers[0], sleepers[3]):
                r = f.result(30)
                self.assertEqual("CANCELLED", r.status, r)
            self.assertFalse(any(f.done() for f in sleepers[1:3]), "the others go on")
            # the freed slot takes the task that waited
            wait_for(lambda: inst.status()["running"] == 2, what="the queued task taking the freed slot")
            self.assertEqual(1, inst.cancel(sleepers[1]))
            self.assertEqual("CANCELLED", sleepers[1].result(30).status)
            # a finished task is not cancelled again; a callback names its task as a Future does
            done = inst.submit(["/bin/true"])
            self.assertTrue(done.result(30).ok)
            self.assertEqual(0, inst.cancel(done))
            got = []

            def callback(result, error):
                got.append(result or error)
            inst.submit(["/bin/sleep", "30"], callback=callback)
            self.assertEqual(2, inst.cancel(sleepers[2], callback))
            self.assertEqual("CANCELLED", sleepers[2].result(30).status)
            wait_for(lambda: got, what="the callback's result")
            self.assertEqual("CANCELLED", got[0].status, got[0])
            self.assertEqual(0, inst.unfinished())


@unittest.skipUnless(BUILT, "Falkon is not built (run the README's build first)")
class ReconnectTest(unittest.TestCase):
    """A dispatcher that dies and comes back on the same port: with its journal, every task ends with
    one result; without it, every unfinished task fails naming the loss (never hangs, never succeeds)."""

    def start_dispatcher(self, port, journal, token):
        args = [FALKON, "dispatcher", "--host", "127.0.0.1", "--port", str(port)]
        if journal:
            args += ["--journal", journal, "--fsync", "ALWAYS"]
        p = subprocess.Popen(args, env=dict(os.environ, FALKON_TOKEN=token), stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True)
        for line in p.stdout:
            if "listening on" in line:
                break
        self.addCleanup(lambda: (p.poll() is None and p.kill(), p.wait(), p.stdout.close()))
        return p

    def run_restart(self, journal):
        token = "t" * 32
        local = LocalDispatcher(executors=0, falkon=FALKON)
        port = local.port  # a port known to be free: the first dispatcher only picks it
        local.stop()
        first = self.start_dispatcher(port, journal, token)
        executor = subprocess.Popen([FALKON, "executor", "--dispatcher", f"127.0.0.1:{port}", "--slots", "2",
                                     "--reconnect-for", "60"], env=dict(os.environ, FALKON_TOKEN=token),
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.addCleanup(stop, executor)  # TERM: it removes its spool directory as it leaves
        c = Client(f"127.0.0.1:{port}", token=token, reconnect_for=60)
        self.addCleanup(c.close)
        inst = c.create_instance("restart", lease_seconds=300)
        futures = [inst.submit(["/bin/sh", "-c", f"sleep 0.2; echo {i}"]) for i in range(30)]
        wait_for(lambda: sum(f.done() for f in futures) >= 4, what="some results before the crash")
        first.send_signal(signal.SIGKILL)
        first.wait()
        self.start_dispatcher(port, journal, token)
        done, _ = concurrent.futures.wait(futures, timeout=90)
        self.assertEqual(len(futures), len(done), "every future completes")
        return futures

    def test_with_its_journal_every_task_gets_one_result(self):
        with tempfile.TemporaryDirectory() as journal:
            futures = self.run_restart(journal)
        for i, f in enumerate(futures):
            r = f.result()
            self.assertTrue(r.ok, r)
            self.assertEqual(f"{i}\n".encode(), r.stdout)

    def test_without_its_journal_unfinished_tasks_fail_as_lost(self):
        futures = self.run_restart(None)
        lost = [f for f in futures if f.exception() is not None]
        self.assertTrue(lost, "tasks unfinished at the crash cannot have succeeded")
        for f in lost:
            self.assertIn("unfinished tasks were lost", str(f.exception()))
        for f in futures:
            if f.exception() is None:
                self.assertTrue(f.result().ok)


@unittest.skipUnless(BUILT, "Falkon is not built (run the README's build first)")
class BusyTest(unittest.TestCase):
    def test_bundles_refused_over_the_memory_budget_are_sent_again_and_all_run(self):
        with LocalDispatcher(executors=0, falkon=FALKON, extra_dispatcher_args=["--max-memory", "1"]) as local, \
                Client(local.address, token=local.token) as c, c.create_instance() as inst:
            payload = "x" * 500
            futures = [inst.submit(["/bin/echo", payload, str(i)]) for i in range(6000)]
            wait_for(lambda: c.status()["memory"]["refusedBundles"] > 0, what="a BUSY answer")
            self.assertFalse(any(f.done() for f in futures))
            local.start_executor(extra_args=["--no-exec"])
            done, _ = concurrent.futures.wait(futures, timeout=120)
            self.assertEqual(len(futures), len(done))
            self.assertTrue(all(f.result().ok for f in futures))
            self.assertEqual(6000, inst.status()["completed"])


@unittest.skipUnless(BUILT, "Falkon is not built (run the README's build first)")
@unittest.skipUnless(shutil.which("openssl"), "openssl is needed to make a throwaway certificate")
class TlsTest(unittest.TestCase):
    """A dispatcher with a throwaway certificate: a client trusting it runs tasks; one speaking plain
    TCP to it, or trusting nothing, is refused with an error, not left hanging."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="falkon-tls-")
        cls.cert, key = os.path.join(cls.dir, "cert.pem"), os.path.join(cls.dir, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cls.cert,
                        "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                       check=True, capture_output=True)
        cls.local = LocalDispatcher(executors=1, slots=2, falkon=FALKON, log_dir=cls.dir,
                                    extra_dispatcher_args=["--tls-cert", cls.cert, "--tls-key", key],
                                    extra_executor_args=["--tls-ca", cls.cert])

    @classmethod
    def tearDownClass(cls):
        cls.local.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_a_client_trusting_the_certificate_runs_tasks(self):
        with Client(self.local.address, token=self.local.token, tls_ca=self.cert) as c:
            with c.create_instance() as inst:
                self.assertEqual(b"over tls\n", inst.submit(["/bin/echo", "over tls"]).result(60).stdout)

    def test_plain_tcp_to_a_tls_dispatcher_fails_fast(self):
        with self.assertRaisesRegex(FalkonError, "no handshake"):
            Client(self.local.address, token=self.local.token, connect_timeout=5, reconnect_for=0)

    def test_a_client_trusting_another_certificate_is_refused(self):
        other = os.path.join(self.dir, "other.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                        os.path.join(self.dir, "other.key"), "-out", other, "-days", "1", "-subj", "/CN=other"],
                       check=True, capture_output=True)
        with self.assertRaisesRegex(FalkonError, "CERTIFICATE_VERIFY_FAILED"):
            Client(self.local.address, token=self.local.token, tls_ca=other, reconnect_for=0)


class TokenTest(unittest.TestCase):
    def test_the_order_every_falkon_command_uses(self):
        with tempfile.TemporaryDirectory() as home:
            pathlib.Path(home, "token").write_text("from-home\n")
            f = pathlib.Path(home, "file")
            f.write_text("from-file\nsecond line\n")
            env = {"FALKON_HOME": home}
            self.assertEqual("from-home", find_token(environ=env))
            self.assertEqual("from-file", find_token(environ=dict(env, FALKON_TOKEN_FILE=str(f))))
            self.assertEqual("from-env", find_token(environ=dict(env, FALKON_TOKEN=" from-env ",
                                                                 FALKON_TOKEN_FILE=str(f))))
            self.assertEqual("from-file", find_token(token_file=str(f), environ=dict(env, FALKON_TOKEN="x")))
            self.assertEqual("given", find_token(token="given", token_file=str(f), environ=env))
            self.assertEqual("", find_token(environ={"FALKON_HOME": os.path.join(home, "none")}))
            pathlib.Path(home, "empty").write_text("\n")
            with self.assertRaisesRegex(ValueError, "is empty"):
                find_token(token_file=os.path.join(home, "empty"), environ=env)
            with self.assertRaisesRegex(ValueError, "cannot read the token file"):
                find_token(token_file=os.path.join(home, "missing"), environ=env)


if __name__ == "__main__":
    unittest.main()


def _running(pid):
    """Whether ``pid`` is a live process (a zombie, dead but not yet reaped by whoever adopted it, is not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


@unittest.skipUnless(BUILT, "Falkon is not built (run the README's build first)")
class OrphanTest(unittest.TestCase):
    def start(self, program):
        """Runs ``program`` (Python, given the falkon command as its argument) with this checkout's
        package; returns the process and the words of the first line it prints."""
        import sys
        src = str(pathlib.Path(__file__).resolve().parents[1] / "src")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p))
        parent = subprocess.Popen([sys.executable, "-c", program, FALKON], stdout=subprocess.PIPE, text=True, env=env)
        self.addCleanup(lambda: (parent.poll() is None and parent.kill(), parent.wait(), parent.stdout.close()))
        return parent, parent.stdout.readline().split()

    def test_a_program_killed_outright_takes_its_local_dispatcher_and_executors_with_it(self):
        """SIGKILL runs no atexit hook and no stop(): the dispatcher sees its standard input end
        (--stop-with-stdin) and stops, and tells its executors to leave."""
        program = ("import sys, time\n"
                   "from falkon import LocalDispatcher\n"
                   "local = LocalDispatcher(executors=1, falkon=sys.argv[1])\n"
                   "print(local.dispatcher.pid, *(p.pid for p in local.executors), flush=True)\n"
                   "time.sleep(600)\n")
        parent, words = self.start(program)
        pids = [int(w) for w in words]
        # a test run leaves nothing running, whatever this test finds
        self.addCleanup(lambda: [os.kill(pid, signal.SIGKILL) for pid in pids if _running(pid)])
        self.assertEqual(2, len(pids), "the dispatcher's and the executor's process ids")
        self.assertTrue(all(_running(pid) for pid in pids))
        parent.kill()
        parent.wait()
        wait_for(lambda: not any(_running(pid) for pid in pids), timeout=60,
                 what="the killed program's dispatcher and executor to exit")

    def test_a_program_killed_outright_takes_its_provisioner_and_the_nodes_it_holds_with_it(self):
        """The same for `falkon provision --stop-with-stdin` (the Snakemake plugin's): it stops as on
        SIGTERM, giving back what it holds; here the local provisioner's node, an executor process."""
        program = ("import subprocess, sys, time\n"
                   "from falkon import LocalDispatcher\n"
                   "local = LocalDispatcher(executors=0, falkon=sys.argv[1])\n"
                   "p = subprocess.Popen([sys.argv[1], 'provision', '--stop-with-stdin', '--dispatcher', local.address,\n"
                   "                      '--provisioner', 'local', '--min-nodes', '1', '--max-nodes', '1'],\n"
                   "                     env=local.env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)\n"
                   "print(local.address, local.dispatcher.pid, p.pid, flush=True)\n"
                   "time.sleep(600)\n")
        parent, (address, *pids) = self.start(program)
        pids = [int(p) for p in pids]

        def dialling():  # processes started with the dispatcher's address: the provisioner and its node
            found = []
            for entry in os.listdir("/proc"):
                try:
                    with open(f"/proc/{entry}/cmdline", "rb") as f:
                        if address.encode() in f.read() and _running(int(entry)):
                            found.append(int(entry))
                except (OSError, ValueError):
                    pass
            return found

        self.addCleanup(lambda: [os.kill(pid, signal.SIGKILL) for pid in set(pids + dialling()) if _running(pid)])
        self.assertEqual(2, len(pids), "the dispatcher's and the provisioner's process ids")
        wait_for(lambda: len(dialling()) >= 2, timeout=120, what="the provisioner's node to start")
        parent.kill()
        parent.wait()
        wait_for(lambda: not any(_running(pid) for pid in pids) and not dialling(), timeout=120,
                 what="the killed program's dispatcher, provisioner and node to exit")
