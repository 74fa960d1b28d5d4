"""The ceiling of the comparison in parsl_throughput.py: Parsl's ThreadPoolExecutor runs each app in a
thread of the submitting process itself, so what it reaches is what Parsl's DataFlowKernel can submit
and complete on this machine with no executor in the way (python_apps only: a bash_app still starts
a process)."""

from parsl.config import Config
from parsl.executors import ThreadPoolExecutor


def fresh_config():
    return Config(executors=[ThreadPoolExecutor(label="threads", max_threads=2)], strategy="none")
