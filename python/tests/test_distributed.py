"""Several real dispatchers behind one DistributedClient: balancing by capacity, a dispatcher lost mid-run."""

import concurrent.futures
import os
import signal
import tempfile
import unittest

from falkon import DistributedClient, LocalDispatcher

from falkon_test_support import BUILT, FALKON, wait_for


@unittest.skipUnless(BUILT, "Falkon is not built (run the README's build first)")
class DistributedTest(unittest.TestCase):
    TOKEN = "shared-token-for-this-test"  # the dispatchers of one client share a token, as on a cluster

    def dispatchers(self, *slots):
        """One dispatcher with one executor per entry of ``slots``, stopped at the end; their addresses."""
        ds = [LocalDispatcher(executors=1, slots=s, falkon=FALKON, token=self.TOKEN) for s in slots]
        for d in ds:
            self.addCleanup(d.stop)
        return ds, ",".join(d.address for d in ds)

    def test_tasks_follow_capacity_and_a_lost_dispatcher_loses_nothing(self):
        ds, addresses = self.dispatchers(1, 3)
        with DistributedClient(addresses, token=self.TOKEN, reconnect_for=2) as c:
            wait_for(lambda: c.status()["executors"]["slots"] == 4, what="4 slots")
            inst = c.create_instance("spread")
            futures = [inst.submit(["/bin/sleep", "0.1"]) for _ in range(80)]
            wait_for(lambda: sum(f.done() for f in futures) >= 10, what="some results")
            held = inst.held_by()
            self.assertTrue(all(n > 0 for n in held.values()), held)
            ds[0].dispatcher.kill()  # SIGKILL, no journal: what it held runs on the other
            done, _ = concurrent.futures.wait(futures, timeout=120)
            self.assertEqual(len(futures), len(done))
            self.assertTrue(all(f.result().ok for f in futures))
            self.assertGreaterEqual(inst.resent, 1)
            by = {}
            for f in futures:
                by[f.result().executor_id] = by.get(f.result().executor_id, 0) + 1
            self.assertEqual(2, len(by), by)

    def test_a_hung_dispatchers_tasks_move_after_the_detection_time(self):
        # SIGSTOP: its connection stays open; without failover the client would wait for it (reconnect_for, 120 s)
        ds, addresses = self.dispatchers(2, 2)
        with DistributedClient(addresses, token=self.TOKEN, failover_after=1.5) as c:
            wait_for(lambda: c.status()["executors"]["slots"] == 4, what="4 slots")
            inst = c.create_instance("hang")
            futures = [inst.submit(["/bin/sleep", "0.1"]) for _ in range(60)]
            wait_for(lambda: sum(f.done() for f in futures) >= 10, what="some results")
            victim = ds[0].dispatcher
            wait_for(lambda: inst.held_by().get(ds[0].address, 0) > 0, what="tasks held by the victim")
            victim.send_signal(signal.SIGSTOP)
            self.addCleanup(victim.send_signal, signal.SIGCONT)  # so that it can be stopped like the other
            done, _ = concurrent.futures.wait(futures, timeout=60)
            self.assertEqual(len(futures), len(done), "every task finished well before reconnect_for (120 s)")
            self.assertTrue(all(f.result().ok for f in futures))
            self.assertGreaterEqual(inst.resent, 1)

    def test_a_dispatchers_file_that_lists_none_yet_is_followed_as_dispatchers_appear(self):
        token = self.TOKEN
        with tempfile.TemporaryDirectory() as tmp:
            listing = os.path.join(tmp, "dispatchers")
            with DistributedClient("file:" + listing, token=token) as c:
                inst = c.create_instance("waits")
                futures = [inst.submit(["/bin/true"]) for _ in range(20)]
                self.assertFalse(any(f.done() for f in futures), "no dispatcher yet: the tasks wait")
                d = LocalDispatcher(executors=1, slots=2, falkon=FALKON, token=token)
                self.addCleanup(d.stop)
                with open(listing + ".tmp", "w") as f:
                    f.write(d.address + "\n")
                os.replace(listing + ".tmp", listing)
                done, _ = concurrent.futures.wait(futures, timeout=120)
                self.assertEqual(len(futures), len(done))
                self.assertTrue(all(f.result().ok for f in futures))
                self.assertEqual(1, c.status()["dispatchers"])


if __name__ == "__main__":
    unittest.main()
