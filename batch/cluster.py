"""The same per-file tasks sent to a Dask distributed cluster (`--scheduler tcp://HOST:PORT`). Each Dask worker keeps
a Blender process of its own (batch.pool.BlenderProcess, started by the command the batch gives) and converts one
task at a time in it; inputs and outputs must be on storage every worker sees, at the same paths. `distributed` is
optional: imported only here, only when a scheduler is named."""

from __future__ import annotations

import importlib
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from . import pool

_PROCESS_ATTRIBUTE = "iogf_blender_process"


class SchedulerUnavailable(Exception):
    """No cluster to send the tasks to: `distributed` is missing, or the scheduler cannot be reached."""


def convert_on_worker(command: list[str], task: pool.Task) -> pool.Result:
    """Run on a Dask worker: the task in this worker's Blender process (started on its first task, and again if
    it stopped)."""
    worker = importlib.import_module("distributed").get_worker()
    process = getattr(worker, _PROCESS_ATTRIBUTE, None)
    if process is None or process.process.poll() is not None or process.command != command:
        process = pool.BlenderProcess(command)
        setattr(worker, _PROCESS_ATTRIBUTE, process)
    return process.ask(task)


def run_on_cluster(
    scheduler: str, command: Sequence[str], tasks: Sequence[pool.Task], started: Callable[[int], None] | None = None
) -> Iterator[tuple[int, pool.Result]]:
    """Every task's result as the cluster finishes them, with its index (`started(index)` just before: the cluster
    decides when a task starts)."""
    try:
        distributed = importlib.import_module("distributed")
        cloudpickle = importlib.import_module("cloudpickle")
    except ImportError:
        raise SchedulerUnavailable("--scheduler needs the Python package 'distributed' (pip install distributed)") \
            from None  # fmt: skip
    # The workers need not have this extension importable: its two modules travel with the tasks.
    for module in (sys.modules[__name__], pool):
        cloudpickle.register_pickle_by_value(module)
    try:
        client = distributed.Client(scheduler, timeout=10)
    except (OSError, TimeoutError) as error:
        raise SchedulerUnavailable(f"{scheduler}: cannot reach the Dask scheduler ({error})") from None
    try:
        run = uuid.uuid4().hex[:8]
        futures: dict[Any, int] = {}
        for index, task in enumerate(tasks):
            future = client.submit(convert_on_worker, list(command), task, key=f"iogf-{run}-{index}", pure=False)
            futures[future] = index
        for future in distributed.as_completed(list(futures)):
            index = futures[future]
            if started is not None:
                started(index)
            try:
                result = future.result()
            except Exception as error:  # (a worker lost, the task cancelled): that input failed, the batch goes on
                result = {"status": "failed", "error": f"the cluster could not run it ({error})"}
            yield index, result
    finally:
        client.close()
