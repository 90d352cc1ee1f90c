"""The same per-file tasks sent to a Dask distributed cluster (`--scheduler tcp://HOST:PORT`). Each thread of a Dask
worker keeps a Blender process of its own (batch.pool.BlenderProcess, started by the command the batch gives, on
its first task and again if it stopped) and converts groups of tasks in it (see groups_of), one file at a time;
inputs and outputs must be on storage every worker sees, at the same paths, and so must the command's program.
`distributed` is optional: imported only here, only when a scheduler is named.

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
GROUP_SIZE = 16  # at most this many tasks in one Dask task (see groups_of)
GROUPS_PER_THREAD = 4
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


def convert_on_worker(command: list[str], tasks: list[pool.Task], verbose: bool = False) -> list[pool.Result]:
    """Run on a Dask worker: a group of tasks in this worker thread's Blender process (started on its first task,
    and again if it stopped or the command changed), each task's result in order. With `verbose`, Blender's lines
    go to the Dask worker's log."""
    distributed = importlib.import_module("distributed")
    worker = distributed.get_worker()
    processes: dict[int, Any] = getattr(worker, _PROCESSES_ATTRIBUTE, None) or {}
    setattr(worker, _PROCESSES_ATTRIBUTE, processes)
    thread = threading.get_ident()
    results: list[pool.Result] = []
    while len(results) < len(tasks):  # (a process that stopped failed one task: a new one takes the rest)
        process = processes.get(thread)
        if process is None or process.process.poll() is not None or process.command != command:
            if process is not None:
                process.close()
            process = processes[thread] = pool.BlenderProcess(command, verbose, environment=_without_nanny_settings())
        results += process.ask(tasks[len(results) :])
    return results


def _without_nanny_settings() -> dict[str, str]:
    """This environment without what Dask's nanny set for its worker's own Python (MALLOC_TRIM_THRESHOLD_=65536
    returns freed memory to the system at once: a Blender allocating and freeing per file would take 5-10% longer),
    but for the thread counts, which batch.pool sets the same."""
    config = importlib.import_module("dask").config
    nanny: dict[str, Any] = config.get("distributed.nanny.pre-spawn-environ", default={}) or {}
    return {name: value for name, value in os.environ.items()
            if name in pool.ONE_THREAD or name not in nanny or str(nanny[name]) != value}  # fmt: skip


def groups_of(count: int, threads: int) -> list[list[int]]:
    """The task indexes in consecutive groups, one Dask task each: a Dask task costs the scheduler, the worker and
    this client milliseconds of their own, as much as converting a small file, so small files go in groups; about
    GROUPS_PER_THREAD groups for each worker thread (the last ones balance the load), of at most GROUP_SIZE."""
    size = max(1, min(GROUP_SIZE, -(-count // (max(1, threads) * GROUPS_PER_THREAD))))
    return [list(range(start, min(start + size, count))) for start in range(0, count, size)]


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
        workers = client.scheduler_info().get("workers") or {}
        if not workers:
            print(f"waiting for a Dask worker to join {scheduler}", file=sys.stderr, flush=True)
        groups = groups_of(len(tasks), sum(int(worker.get("nthreads", 1)) for worker in workers.values()))
        run = uuid.uuid4().hex[:8]
        here = os.getcwd()
        futures = client.map(
            _ByValue(cloudpickle, convert_on_worker), [list(command)] * len(groups),
            [[{**tasks[index], "cwd": here} for index in group] for group in groups], [verbose] * len(groups),
            key=[f"iogf-{run}-{number}" for number in range(len(groups))], pure=False,
        )  # fmt: skip
        numbers = {future.key: number for number, future in enumerate(futures)}
        for future in distributed.as_completed(futures):
            group = groups[numbers[future.key]]
            try:
                results = future.result()
            except Exception as error:  # (a worker lost, the task cancelled): those inputs failed, the batch goes on
                results = [{"status": "failed", "error": f"the cluster could not run it ({error})"}] * len(group)
            for index, result in zip(group, results, strict=True):
                if started is not None:
                    started(index)
                yield index, result
    finally:
        client.close()
