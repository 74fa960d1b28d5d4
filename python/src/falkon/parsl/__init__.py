"""Parsl on Falkon: ``from falkon.parsl import FalkonExecutor`` (needs Parsl installed)."""

from .executor import FalkonExecutor, TaskLost

__all__ = ["FalkonExecutor", "TaskLost"]
