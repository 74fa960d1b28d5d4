"""The persistent worker of ExecutorContract's worker tests (falkon.resident): what it answers shows
which process served a task and what the task was handed; some verbs fail or die on purpose."""

import os
import time

from falkon import resident


held = []
# the devices it was started with (named resources): a worker keeps them for its whole life
STARTED_WITH = os.environ.get("CUDA_VISIBLE_DEVICES", "-")


def handle(req):
    verb = req.argv[0]
    if verb == "die":  # the worker itself dies while running the task
        os._exit(int(req.argv[1]))
    if verb == "sleep":  # says it started (a file in its directory), then sleeps
        open("started", "w").close()
        time.sleep(float(req.argv[1]))
    if verb == "print":  # a task's print must not reach the framing
        print("printed by the task")
    if verb == "grow":  # holds on to N MiB, as a leaking library would
        held.append(b"x" * (int(req.argv[1]) << 20))
    if verb == "devices":
        return 0, f"pid={os.getpid()} started={STARTED_WITH}\n".encode(), b""
    if verb == "fail":
        return 3, b"", b"failed on purpose\n"
    if verb == "big":
        return 0, b"x" * int(req.argv[1]), b""
    answer = (f"pid={os.getpid()} argv={' '.join(req.argv)} cwd={os.getcwd()} "
              f"mark={os.environ.get('MARK', '-')} payload={req.payload.decode()}\n")
    return 0, answer.encode(), b""


if __name__ == "__main__":
    resident.serve(handle)
