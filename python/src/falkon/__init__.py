"""Falkon for Python: a client of the dispatcher's TCP protocol (standard library only), a local
dispatcher for programs and tests, and a Parsl executor (``falkon.parsl``)."""

from .client import Client, ConnectionLost, FalkonError, Instance, Result, parse_address
from .distributed import DistributedClient, DistributedInstance
from .local import LocalDispatcher
from .wire import task_spec

__all__ = ["Client", "ConnectionLost", "DistributedClient", "DistributedInstance", "FalkonError", "Instance",
           "LocalDispatcher", "Result", "parse_address", "task_spec"]
__version__ = "0.1.0"
