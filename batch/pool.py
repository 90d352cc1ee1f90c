"""Worker processes, each a Blender with this extension running `worker`, fed one task at a time as a JSON line
on its stdin; each answers with one result line on its stdout, marked (Blender's own lines there are not ours).
A worker that stops gets its task failed, and a new worker takes the next task."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

RESULT_MARKER = "\x1eiogf-result "  # starts a worker's result line
# Workers run side by side, one per core: numpy's BLAS in each keeps to one thread, as in a Dask worker (its own
# threads would only wait for work, spinning on the cores the other workers need). What the caller set is kept.
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
Task = dict[str, Any]
Result = dict[str, Any]


def result_line(result: Result) -> bytes:
    """What a worker writes for a result."""
    return (RESULT_MARKER + json.dumps(result) + "\n").encode("utf-8")


class BlenderProcess:
    """One worker process; `ask` sends a task and waits for its result."""

    def __init__(self, command: Sequence[str], verbose: bool = False) -> None:
        self.command = list(command)
        self.process = subprocess.Popen(
            list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=None if verbose else subprocess.DEVNULL,
            start_new_session=True,  # (Ctrl-C reaches the batch, which stops its workers itself)
            env={**ONE_THREAD, **os.environ},
        )  # fmt: skip
        self.verbose = verbose
        self.buffer = b""
        self.task: tuple[int, Task] | None = None

    def send(self, index: int, task: Task) -> None:
        assert self.process.stdin is not None
        self.task = (index, task)
        self.process.stdin.write((json.dumps(task) + "\n").encode("utf-8"))
        self.process.stdin.flush()

    def read_available(self) -> Result | None:
        """Read what the worker wrote; its result once complete, None before. Raises EOFError when it stopped."""
        assert self.process.stdout is not None
        chunk = os.read(self.process.stdout.fileno(), 1 << 16)
        if not chunk:
            raise EOFError
        self.buffer += chunk
        return self._result()

    def _result(self) -> Result | None:
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            text = line.decode("utf-8", errors="replace")
            if text.startswith(RESULT_MARKER):
                self.task = None
                result: Result = json.loads(text[len(RESULT_MARKER) :])
                return result
            if self.verbose:
                print(text)
        return None

    def ask(self, task: Task) -> Result:
        """Send a task and wait for its result (the Dask path: one task at a time per process)."""
        self.send(0, task)
        while True:
            try:
                result = self.read_available()
            except EOFError:
                return stopped_result(self.process.wait())
            if result is not None:
                return result

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.stop()

    def stop(self) -> None:
        """SIGTERM (the worker removes what it was writing and exits), then SIGKILL if it does not."""
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def stopped_result(status: int) -> Result:
    return {"status": "failed", "error": f"the worker process stopped (exit status {status}) before it answered"}


class WorkerPool:
    """`count` workers converting tasks side by side; results come back as they finish, with their task's index."""

    def __init__(self, command: Sequence[str], count: int, verbose: bool = False) -> None:
        self.command, self.count, self.verbose = list(command), count, verbose
        self.workers: list[BlenderProcess] = []

    def run(self, tasks: Sequence[Task], started: Any = None) -> Iterator[tuple[int, Result]]:
        """Every task's result, in the order they finish; `started(index)` is called as each is sent."""
        pending = deque(enumerate(tasks))
        selector = selectors.DefaultSelector()
        try:
            for _ in range(min(self.count, len(pending))):
                self._start(selector)
            for worker in list(self.workers):
                self._feed(worker, pending, started)
            while any(worker.task is not None for worker in self.workers):
                for key, _ in selector.select():
                    worker = key.data
                    assert worker.task is not None
                    index = worker.task[0]
                    try:
                        result = worker.read_available()
                    except EOFError:
                        selector.unregister(key.fileobj)
                        self.workers.remove(worker)
                        yield index, stopped_result(worker.process.wait())
                        if pending:
                            self._feed(self._start(selector), pending, started)
                        continue
                    if result is not None:
                        yield index, result
                        self._feed(worker, pending, started)
        finally:
            selector.close()

    def _start(self, selector: selectors.BaseSelector) -> BlenderProcess:
        worker = BlenderProcess(self.command, self.verbose)
        assert worker.process.stdout is not None
        selector.register(worker.process.stdout, selectors.EVENT_READ, worker)
        self.workers.append(worker)
        return worker

    @staticmethod
    def _feed(worker: BlenderProcess, pending: deque[tuple[int, Task]], started: Any) -> None:
        if pending:
            index, task = pending.popleft()
            if started is not None:
                started(index)
            worker.send(index, task)

    def close(self) -> None:
        for worker in self.workers:
            worker.close()
        self.workers.clear()

    def stop(self) -> None:
        for worker in self.workers:
            with contextlib.suppress(OSError):
                worker.process.send_signal(signal.SIGTERM)
        for worker in self.workers:
            worker.stop()
        self.workers.clear()
