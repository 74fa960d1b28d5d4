"""What the live tests share: the falkon command of this checkout, and waiting for a condition."""

import os
import pathlib
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
