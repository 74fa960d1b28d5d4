"""Snakemake's own executor-plugin test cases (snakemake.common.tests, as the official executor
plugins run them) against this plugin, with an embedded dispatcher."""

from typing import Optional

import snakemake.common.tests
from snakemake_interface_executor_plugins.settings import ExecutorSettingsBase

from snakemake_executor_plugin_falkon import ExecutorSettings


class TestWorkflows(snakemake.common.tests.TestWorkflowsLocalStorageBase):
    __test__ = True

    def get_executor(self) -> str:
        return "falkon"

    def get_executor_settings(self) -> Optional[ExecutorSettingsBase]:
        return ExecutorSettings(executors=2, slots=2)


class TestWorkflowsThroughJobCommand(TestWorkflows):
    """The same cases with every job run by Snakemake's job command (no direct shell tasks)."""

    def get_executor_settings(self) -> Optional[ExecutorSettingsBase]:
        return ExecutorSettings(executors=2, slots=2, always_job_command=True)
