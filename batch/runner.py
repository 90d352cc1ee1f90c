"""A batch of conversions: what is up to date is skipped (batch.record), the rest runs in this process (beside a
pool of worker processes with --jobs) or on a Dask cluster; results are handed on in input order however they
finish, written to the record as they finish (an interrupted batch keeps them) and to the JSON Lines report."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import IO

from . import cluster, pool
from .record import Record, record_path


@dataclass
class Job:
    """One conversion: its inputs as given, the output, the task a worker runs, and what decides if it is up to
    date (the files it is made from, the files it writes, its options and the extension's version)."""

    inputs: list[str]
    output: str
    task: pool.Task
    fingerprint: str
    sources: list[str]
    outputs: list[str]


@dataclass
class Tally:
    converted: int = 0
    skipped: int = 0
    failed: int = 0
    started: float = field(default_factory=time.perf_counter)

    def line(self, done: str = "converted") -> str:
        seconds = time.perf_counter() - self.started
        return f"{self.converted} {done}, {self.skipped} skipped, {self.failed} failed in {seconds:.1f} s"


SKIPPED: pool.Result = {"status": "skipped"}


@dataclass
class Batch:
    """How the jobs run: `local` converts one task in this process; `command` starts a worker process."""

    local: Callable[[pool.Task], pool.Result]
    command: Callable[[], list[str]]
    workers: int = 1
    scheduler: str | None = None
    force: bool = False
    verbose: bool = False
    tally: Tally | None = None  # (the last run's, so far: what an interrupted run did)
    _pool: pool.WorkerPool | None = None

    def run(
        self, jobs: Sequence[Job], finished: Callable[[Job, pool.Result], None],
        started: Callable[[int], None] | None = None,
    ) -> Tally:  # fmt: skip
        """Run the jobs; `finished(job, result)` for each in input order (skipped ones too), `started(index)` as
        each is begun."""
        tally = self.tally = Tally()
        self._pool = None  # (set by a local pool run: what an interrupt salvages from)
        by_folder: dict[str, Record] = {}  # (one record per folder, shared by its outputs)
        for job in jobs:
            folder = record_path(job.output)
            if folder not in by_folder:
                by_folder[folder] = Record.beside(job.output)
        records = {job.output: by_folder[record_path(job.output)] for job in jobs}
        waiting: dict[int, pool.Result] = {}
        to_run = []
        for index, job in enumerate(jobs):
            if not self.force and records[job.output].up_to_date(job.output, job.fingerprint):
                written = [as_given_beside(path, job.output) for path in records[job.output].outputs_of(job.output)]
                waiting[index] = {**SKIPPED, "written": written}
            else:
                to_run.append(index)
        following = 0

        def take(index: int, result: pool.Result) -> None:
            job = jobs[index]
            if result.get("status") == "ok":
                records[job.output].store(job.output, job.fingerprint, job.sources, written_by(job, result))
            else:
                records[job.output].forget(job.output)
            waiting[index] = result

        try:
            for index, result in self._results(jobs, to_run, started):
                take(index, result)
                while following in waiting:  # (hand on in input order)
                    self._hand_on(jobs[following], waiting.pop(following), tally, finished)
                    following += 1
        except BaseException:  # (interrupted: what finished is kept, recorded and handed on, in input order)
            salvaged: list[tuple[int, pool.Result]] = self._pool.salvaged() if self._pool is not None else []
            for position, result in salvaged:
                take(to_run[position], result)
            for index in sorted(waiting):
                self._hand_on(jobs[index], waiting.pop(index), tally, finished)
            raise
        finally:
            for record in by_folder.values():
                record.flush()
        while following in waiting:
            self._hand_on(jobs[following], waiting.pop(following), tally, finished)
            following += 1
        return tally

    @staticmethod
    def _hand_on(job: Job, result: pool.Result, tally: Tally, finished: Callable[[Job, pool.Result], None]) -> None:
        status = result.get("status")
        if status == "skipped":
            tally.skipped += 1
        elif status == "ok":
            tally.converted += 1
        else:
            tally.failed += 1
        finished(job, result)

    def _results(
        self, jobs: Sequence[Job], to_run: list[int], started: Callable[[int], None] | None
    ) -> Iterator[tuple[int, pool.Result]]:
        tasks = [jobs[index].task for index in to_run]
        if self.scheduler is not None:
            each = cluster.run_on_cluster(self.scheduler, self.command(), tasks, _renumbered(started, to_run),
                                          self.verbose)  # fmt: skip
            for position, result in each:
                yield to_run[position], result
            return
        if self.workers <= 1 or len(tasks) <= 1:
            for index in to_run:
                if started is not None:
                    started(index)
                yield index, self.local(jobs[index].task)
            return
        # (this process converts too, beside workers - 1 others: it is a Blender already started)
        workers = self._pool = pool.WorkerPool(self.command(), self.workers - 1, self.verbose)
        try:
            for position, result in workers.run(tasks, self.local, _renumbered(started, to_run)):
                yield to_run[position], result
        except BaseException:  # (Ctrl-C, SIGTERM): every worker stops, removing what it was writing
            workers.stop()
            raise
        workers.close()


def as_given_beside(path: str, output: str) -> str:
    """`path` through the folder of `output` as given, when it lies in that folder (`out/model.qc` beside
    `out/model.smd`, whatever form the record or the export named it in)."""
    folder = os.path.dirname(output)
    same_folder = os.path.dirname(os.path.abspath(path)) == os.path.dirname(os.path.abspath(output))
    return os.path.join(folder, os.path.basename(path)) if same_folder else path


def written_by(job: Job, result: pool.Result) -> list[str]:
    """The files a finished job wrote: those its export named (an SMD export with Write QC writes the QC and a file
    per mesh, not the chosen one), else those foreseen from its options; the output first, then the others in
    the order of their paths (as a rerun finds them in the record)."""
    written = result.get("written")
    paths = [str(path) for path in written] if isinstance(written, list) and written else job.outputs
    return sorted(paths, key=lambda path: (os.path.abspath(path) != os.path.abspath(job.output), path))


def _renumbered(started: Callable[[int], None] | None, to_run: list[int]) -> Callable[[int], None] | None:
    if started is None:
        return None
    return lambda position: started(to_run[position])


class Report:
    """`--report FILE.jsonl`: one JSON object per input, written as each is handed on."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def write(self, job: Job, result: pool.Result) -> None:
        for given in job.inputs:
            entry = {
                "input": given,
                "outputs": written_by(job, result) if result.get("status") != "failed" else [],
                "status": result.get("status", "failed"),
                "error": result.get("error"),
                "warnings": result.get("warnings", []),
                "counts": result.get("counts", {}),
                "seconds": round(float(result.get("seconds", 0.0)), 4),
                "converted_by": result.get("converted_by"),
            }
            self.stream.write(json.dumps(entry) + "\n")
        self.stream.flush()
