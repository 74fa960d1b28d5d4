"""HTEX as Parsl's documentation sets it up on one machine: one LocalProvider block, one worker per core
(the comparison in parsl_throughput.py; falkon_config.py is the Falkon side)."""

from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.providers import LocalProvider


def fresh_config():
    return Config(executors=[HighThroughputExecutor(label="htex", provider=LocalProvider(init_blocks=1, max_blocks=1))],
                  strategy="none")
