"""The same per-file tasks sent to a Dask distributed cluster (`--scheduler tcp://HOST:PORT`). Each thread of a Dask
worker keeps a Blender process of its own (batch.pool.BlenderProcess, started by the command the batch gives, on
its first task and again if it stopped) and converts one task at a time in it; inputs and outputs must be on
storage every worker sees, at the same paths, and so must the command's program. `distributed` is optional:
imported only here, only when a scheduler is named.

The workers need not have this extension importable: the function they run travels by value (cloudpickle), with
this module and batch.pool, and the scheduler, which unpickles the task graph too, needs nothing of it either."""

from __future__ import annotations

import importlib
import os
import re
import socket
import sys
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from . import pool

_PROCESSES_ATTRIBUTE = "iogf_blender_processes"  # on the Dask worker: {thread id: BlenderProcess}
DEFAULT_PORT = 8786  # the port `dask scheduler` listens on unless told otherwise
CONNECT_SECONDS = 10
_ADDRESS = re.compile(r"(?:(?P<scheme>[a-z][a-z0-9+.-]*)://)?(?P<host>\[[0-9a-fA-F:.]+\]|[^\s:/\[\]]+)(?::(?P<port>\d+))?")


class SchedulerUnavailable(Exception):
    """No cluster to send the tasks to: `distributed` is missing, or the scheduler cannot be reached."""


def checked_address(text: str) -> str:
    """A scheduler's address as Dask takes it (`tcp://HOST:PORT`; the scheme and port may be left out); ValueError
    for anything else (a mistake in the command line, found before any work)."""
    found = _ADDRESS.fullmatch(text)
    if found is None or (found["port"] is not None and not 0 < int(found["port"]) < 65536):
        raise ValueError(f"{text!r} is not a scheduler address (tcp://HOST:PORT)")
    return text


def convert_on_worker(command: list[str], task: pool.Task, verbose: bool = False) -> pool.Result:
    """Run on a Dask worker: the task in this worker thread's Blender process (started on its first task, and
    again if it stopped or the command changed). With `verbose`, Blender's lines go to the Dask worker's log."""
    worker = importlib.import_module("distributed").get_worker()
    processes: dict[int, Any] = getattr(worker, _PROCESSES_ATTRIBUTE, None) or {}
    setattr(worker, _PROCESSES_ATTRIBUTE, processes)
    thread = threading.get_ident()
    process = processes.get(thread)
    if process is None or process.process.poll() is not None or process.command != command:
        if process is not None:
            process.close()
        process = processes[thread] = pool.BlenderProcess(command, verbose)
    result: pool.Result = process.ask(task)
    return result


class _ByValue:
    """A function pickled by cloudpickle inside a plain pickle: Dask pickles a task graph with the standard pickle
    first, which would name the function by its module (`bl_ext...`, importable only here); this unpickles as the
    function itself wherever it is loaded."""

    def __init__(self, cloudpickle: Any, function: Callable[..., Any]) -> None:
        for module in (sys.modules[function.__module__], pool):
            cloudpickle.register_pickle_by_value(module)
        self.function = function
        self.payload: bytes = cloudpickle.dumps(function)
        self.loads: Callable[[bytes], Any] = cloudpickle.loads

    def __call__(self, *args: Any) -> Any:
        return self.function(*args)

    def __reduce__(self) -> tuple[Callable[[bytes], Any], tuple[bytes]]:
        return self.loads, (self.payload,)


def check_reachable(scheduler: str) -> None:
    """Fail at once, clearly, when nothing listens at a TCP scheduler's address (Dask would retry for its whole
    timeout and then name only the timeout)."""
    found = _ADDRESS.fullmatch(scheduler)
    if found is None or (found["scheme"] or "tcp") != "tcp":
        return
    host, port = found["host"].strip("[]"), int(found["port"] or DEFAULT_PORT)
    try:
        socket.create_connection((host, port), timeout=CONNECT_SECONDS).close()
    except socket.gaierror:
        raise SchedulerUnavailable(f"{scheduler}: cannot reach the Dask scheduler (unknown host {host})") from None
    except OSError as error:
        reason = error.strerror or str(error)
        raise SchedulerUnavailable(f"{scheduler}: cannot reach the Dask scheduler (nothing answers at {host}:{port}: "
                                   f"{reason}; is `dask scheduler` running there?)") from None  # fmt: skip


def run_on_cluster(
    scheduler: str, command: Sequence[str], tasks: Sequence[pool.Task], started: Callable[[int], None] | None = None,
    verbose: bool = False,
) -> Iterator[tuple[int, pool.Result]]:  # fmt: skip
    """Every task's result as the cluster finishes them, with its index (`started(index)` just before: the cluster
    decides when a task starts). Relative paths in the tasks are read from this process's folder."""
    try:
        distributed = importlib.import_module("distributed")
        cloudpickle = importlib.import_module("cloudpickle")
    except ImportError:
        raise SchedulerUnavailable("--scheduler needs the Python package 'distributed' (pip install distributed)") \
            from None  # fmt: skip
    check_reachable(scheduler)
    try:
        client = distributed.Client(scheduler, timeout=CONNECT_SECONDS)
    except (OSError, TimeoutError, ValueError) as error:
        raise SchedulerUnavailable(f"{scheduler}: cannot reach the Dask scheduler ({error})") from None
    try:
        if not tasks:
            return
        if not client.scheduler_info().get("workers"):
            print(f"waiting for a Dask worker to join {scheduler}", file=sys.stderr, flush=True)
        run = uuid.uuid4().hex[:8]
        here = os.getcwd()
        futures = client.map(
            _ByValue(cloudpickle, convert_on_worker), [list(command)] * len(tasks),
            [{**task, "cwd": here} for task in tasks], [verbose] * len(tasks),
            key=[f"iogf-{run}-{index}" for index in range(len(tasks))], pure=False,
        )  # fmt: skip
        indexes = {future.key: index for index, future in enumerate(futures)}
        for future in distributed.as_completed(futures):
            index = indexes[future.key]
            if started is not None:
                started(index)
            try:
                result = future.result()
            except Exception as error:  # (a worker lost, the task cancelled): that input failed, the batch goes on
                result = {"status": "failed", "error": f"the cluster could not run it ({error})"}
            yield index, result
    finally:
        client.close()
