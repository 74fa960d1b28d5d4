"""What the live tests share: the falkon command of this checkout, waiting for a condition, stopping a process."""

import os
import pathlib
import subprocess
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
FALKON = os.environ.get("FALKON_BIN") or str(REPO / "bin" / "falkon")
BUILT = (REPO / "cli" / "target").is_dir()


def wait_for(condition, timeout=30.0, what="condition"):
    """Polls ``condition`` (no event to wait on across processes) until true, or fails naming ``what``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


def stop(process, timeout=30.0):
    """Stops a process started by a test: TERM (so that it cleans up after itself), KILL if it has
    not ended within ``timeout`` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
