"""The command of the persistent Python worker that ``FalkonExecutor`` names for python_apps:
``PYTHON .../falkon/parsl/_resident.py``. Run by path, it puts this package's root first on
``sys.path``, so executors find the same ``falkon`` as the submitter without installing it."""

import os
import sys

if __name__ == "__main__":
    # in place of this file's own directory, whose modules must not shadow others
    sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from falkon.parsl.worker import resident

    resident()
