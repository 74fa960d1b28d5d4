"""A Parsl configuration running every app on Falkon, for Parsl's own test suite and ``parsl-perf``:
``pytest --pyargs parsl.tests --config falkon_config.py``.

The dispatcher is ``$FALKON_DISPATCHER`` (its token found as every Falkon client finds it); when
it is unset, the executor starts a dispatcher and one executor on this machine, as `falkon run` does.
"""

from parsl.config import Config

from falkon.parsl import FalkonExecutor


def fresh_config():
    return Config(executors=[FalkonExecutor(label="falkon")], strategy="none")
