"""Worker processes, each a Blender with this extension running `worker`, fed one task at a time as a JSON line
on its stdin; each answers with one result line on its stdout, marked (Blender's own lines there are not ours).
A worker that stops gets its task failed, and a new worker takes the next task.

The batch's own process converts too (`WorkerPool.run(tasks, local)`): it is a Blender already started, and
would otherwise only wait. It takes tasks from the same queue as the workers, while a thread of its own feeds
them (that thread touches no Blender data, only pipes)."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

RESULT_MARKER = "\x1eiogf-result "  # starts a worker's result line
# Workers run side by side, one per core: numpy's BLAS in each keeps to one thread, as in a Dask worker (its own
# threads would only wait for work, spinning on the cores the other workers need). What the caller set is kept.
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
Task = dict[str, Any]
Result = dict[str, Any]
READY: Result = {"ready": True}
FEEDING_SWITCH_SECONDS = 0.0002
# A worker holds its next task while it converts one: it starts on it at once, without waiting for the feeding
# thread to read its result (the batch's thread may hold the interpreter lock for a while).
TASKS_IN_FLIGHT = 2
WORKER_START_SECONDS = 1.0  # about what a worker takes to start (Blender and this extension): 0.6-1.8 s measured


def result_line(result: Result) -> bytes:
    """What a worker writes for a result."""
    return (RESULT_MARKER + json.dumps(result) + "\n").encode("utf-8")


class BlenderProcess:
    """One worker process; `ask` sends a task and waits for its result."""

    def __init__(self, command: Sequence[str], verbose: bool = False, stderr: int | None = None,
                 environment: dict[str, str] | None = None) -> None:  # fmt: skip
        self.command = list(command)
        self.process = subprocess.Popen(
            list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=stderr if verbose else subprocess.DEVNULL,
            start_new_session=True,  # (Ctrl-C reaches the batch, which stops its workers itself)
            env={**ONE_THREAD, **(os.environ if environment is None else environment)},
        )  # fmt: skip
        self.verbose = verbose
        self.echo: IO[str] = sys.stdout  # (Blender's lines, with `verbose`: here, even while a local task captures)
        self.buffer = b""
        self.tasks: deque[tuple[int, Task]] = deque()  # sent and not answered yet, the one it converts first
        self.ready = False  # (it wrote READY: Blender has started and the extension is loaded)

    def send(self, index: int, task: Task) -> bool:
        """Give the worker a task; False when it has stopped (its pipe is closed) and the task is not its."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write((json.dumps(task) + "\n").encode("utf-8"))
            self.process.stdin.flush()
        except BrokenPipeError:  # (its end is read next: what it held goes back, or is its failure)
            return False
        self.tasks.append((index, task))
        return True

    def read_available(self) -> list[tuple[int, Result]]:
        """Read what the worker wrote: the results it completed, each with its task's index (none yet: []). Raises
        EOFError when it stopped."""
        assert self.process.stdout is not None
        chunk = os.read(self.process.stdout.fileno(), 1 << 16)
        if not chunk:
            raise EOFError
        self.buffer += chunk
        return self._results()

    def _results(self) -> list[tuple[int, Result]]:
        answered = []
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            text = line.decode("utf-8", errors="replace")
            if text.startswith(RESULT_MARKER):
                result: Result = json.loads(text[len(RESULT_MARKER) :])
                if result == READY:
                    self.ready = True
                elif self.tasks:
                    answered.append((self.tasks.popleft()[0], result))
            elif self.verbose:
                print(text, file=self.echo, flush=True)
        return answered

    def ask(self, tasks: Sequence[Task]) -> list[Result]:
        """Send tasks (TASKS_IN_FLIGHT at a time) and wait for their results, in order (the Dask path). If the
        process stops, the task it held fails and the list ends there, shorter than the tasks."""
        results: list[Result] = []
        following = 0
        while len(results) < len(tasks):
            while following < len(tasks) and len(self.tasks) < TASKS_IN_FLIGHT:
                if not self.send(following, tasks[following]):
                    break  # (stopped: its end is read next)
                following += 1
            try:
                answered = self.read_available()
            except EOFError:
                self.tasks.clear()
                return [*results, stopped_result(self.process.wait())]
            results += [result for _, result in answered]
        return results

    def close(self) -> None:
        """No more tasks: it exits. One still starting is not waited for (it has written nothing, and exits once
        Blender has started, finding no task)."""
        with contextlib.suppress(OSError, ValueError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        if not self.ready:
            return
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.stop()

    def stop(self) -> None:
        """SIGTERM (the worker removes what it was writing and exits), then SIGKILL if it does not; one still
        starting exits once started, and is not waited for."""
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                self.process.send_signal(signal.SIGTERM)
            if not self.ready:
                return
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def stopped_result(status: int) -> Result:
    return {"status": "failed", "error": f"the worker process stopped (exit status {status}) before it answered"}


class WorkerPool:
    """`count` workers and this process converting tasks side by side; results come back as they finish, with
    their task's index. Workers are started only when the work would pay for their start, and a worker is given a
    task once it is ready (until then this process converts), so a batch this process finishes alone never waits
    for a worker to start."""

    def __init__(self, command: Sequence[str], count: int, verbose: bool = False) -> None:
        self.command, self.count, self.verbose = list(command), count, verbose
        self.workers: list[BlenderProcess] = []
        # (a worker started while this thread's conversion catches fds 1 and 2 would inherit the catch)
        self._stderr = os.dup(2) if verbose else None
        self._stopping = threading.Event()
        self._workers_wanted = threading.Event()
        self._feeder: threading.Thread | None = None
        self._events: queue.Queue[tuple[str, int, Result]] = queue.Queue()

    def run(
        self, tasks: Sequence[Task], local: Callable[[Task], Result], started: Callable[[int], None] | None = None
    ) -> Iterator[tuple[int, Result]]:  # fmt: skip
        """Every task's result, in the order they finish: `local(task)` converts one in this process; `started(index)`
        is called (in this thread, between this process's own tasks) as each is begun."""
        pending = deque(enumerate(tasks))
        events = self._events = queue.Queue()
        self._stopping.clear()
        self._workers_wanted.clear()
        self._feeder = threading.Thread(target=self._feed_workers, args=(pending, events), daemon=True,
                                        name="iogf-batch-workers")  # fmt: skip
        self._feeder.start()
        # (the feeding thread waits for the interpreter lock while this one converts: handed over sooner, a worker
        # that finished waits less for its next task)
        switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(FEEDING_SWITCH_SECONDS)
        try:
            finished = False
            converted, seconds = 0, 0.0
            while (item := _take(pending)) is not None:
                for event in _drained(events):
                    finished |= event[0] == "done"
                    yield from _handled(event, started)
                index, task = item
                if started is not None:
                    started(index)
                begun = time.perf_counter()
                result = local(task)
                converted, seconds = converted + 1, seconds + time.perf_counter() - begun
                if len(pending) * seconds / converted > WORKER_START_SECONDS:  # (workers would pay for their start)
                    self._workers_wanted.set()
                yield index, result
            self._workers_wanted.set()  # (or not: with nothing pending, the feeding thread ends without any)
            while not finished:
                event = events.get()
                finished = event[0] == "done"
                yield from _handled(event, started)
        finally:
            sys.setswitchinterval(switch_interval)

    def _feed_workers(self, pending: deque[tuple[int, Task]], events: queue.Queue[tuple[str, int, Result]]) -> None:
        """The feeding thread: start the workers, give each ready one the next task, pass their results on, until
        nothing is pending or being converted; then `done` (with the error, if it failed)."""
        selector = selectors.DefaultSelector()
        try:
            # Workers are started once they would pay for their start: the work left would keep this process busy
            # longer than a worker takes to start, or its first file has taken that long already.
            self._workers_wanted.wait(timeout=WORKER_START_SECONDS)
            if pending and not self._stopping.is_set():
                for _ in range(min(self.count, len(pending))):
                    self._start(selector)
            while not self._stopping.is_set() and (pending or any(w.tasks for w in self.workers)):
                for key, _ in selector.select(timeout=0.25):
                    self._read(key.data, selector, pending, events)
        except BaseException as error:  # (handed to the batch's thread, which raises it)
            events.put(("done", -1, {"error": repr(error)}))
            return
        finally:
            selector.close()
        events.put(("done", -1, {}))

    def _read(self, worker: BlenderProcess, selector: selectors.BaseSelector, pending: deque[tuple[int, Task]],
              events: queue.Queue[tuple[str, int, Result]]) -> None:  # fmt: skip
        try:
            answered = worker.read_available()
        except EOFError:
            assert worker.process.stdout is not None
            selector.unregister(worker.process.stdout)
            self.workers.remove(worker)
            status = worker.process.wait()
            if worker.tasks and not self._stopping.is_set():  # (the one it converted failed; the next goes back)
                events.put(("result", worker.tasks[0][0], stopped_result(status)))
                pending.extendleft(reversed(list(worker.tasks)[1:]))
            if worker.ready and pending and not self._stopping.is_set():  # (one that never started: not again)
                self._start(selector)
            return
        for index, result in answered:
            events.put(("result", index, result))
            if worker.tasks:  # (the next is being converted now)
                events.put(("started", worker.tasks[0][0], {}))
        while worker.ready and len(worker.tasks) < TASKS_IN_FLIGHT and (item := _take(pending)) is not None:
            first = not worker.tasks
            if not worker.send(*item):
                pending.appendleft(item)
                break
            if first:
                events.put(("started", item[0], {}))

    def _start(self, selector: selectors.BaseSelector) -> BlenderProcess:
        worker = BlenderProcess(self.command, self.verbose, self._stderr)
        assert worker.process.stdout is not None
        selector.register(worker.process.stdout, selectors.EVENT_READ, worker)
        self.workers.append(worker)
        return worker

    def salvaged(self) -> list[tuple[int, Result]]:
        """After `stop`: the results the feeding thread took from the workers and the batch did not get (each with
        its task's index)."""
        return [(index, result) for kind, index, result in _drained(self._events) if kind == "result"]

    def close(self) -> None:
        """After `run`: the workers' stdin closed, each exits."""
        if self._feeder is not None:
            self._feeder.join()
        for worker in list(self.workers):
            worker.close()
        self.workers.clear()
        self._close_stderr()

    def stop(self) -> None:
        """Every worker stopped at once (each removes what it was writing), the feeding thread with them."""
        self._stopping.set()
        self._workers_wanted.set()
        workers = list(self.workers)
        for worker in workers:
            with contextlib.suppress(OSError):
                worker.process.send_signal(signal.SIGTERM)
        for worker in workers:
            worker.stop()
        if self._feeder is not None:
            self._feeder.join(timeout=5)
        self.workers.clear()
        self._close_stderr()

    def _close_stderr(self) -> None:
        if self._stderr is not None:
            os.close(self._stderr)
            self._stderr = None


def _take(pending: deque[tuple[int, Task]]) -> tuple[int, Task] | None:
    """The next task, or None: both threads take from the queue (deque.popleft is atomic)."""
    try:
        return pending.popleft()
    except IndexError:
        return None


def _drained(events: queue.Queue[tuple[str, int, Result]]) -> Iterator[tuple[str, int, Result]]:
    while True:
        try:
            yield events.get_nowait()
        except queue.Empty:
            return


def _handled(event: tuple[str, int, Result], started: Callable[[int], None] | None) -> Iterator[tuple[int, Result]]:
    kind, index, result = event
    if kind == "started" and started is not None:
        started(index)
    elif kind == "result":
        yield index, result
    elif kind == "done" and "error" in result:
        raise RuntimeError(f"the batch's workers could not be run: {result['error']}")
