"""The batch machinery without Blender: the record that lets a rerun skip what is up to date, the worker pool (with
stand-in workers: small Python processes speaking the workers' protocol) and the runner's input order."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from batch import pool
from batch.record import RECORD_NAME, Record
from batch.runner import Batch, Job

# A stand-in worker: ready at once, answers each task after `sleep` seconds with its `value`; exits with status 3
# on `die`.
FAKE_WORKER = textwrap.dedent(f"""
    import json, os, sys, time
    print("a line of Blender's own", flush=True)
    os.write(1, {pool.result_line(pool.READY)!r})
    for line in sys.stdin:
        task = json.loads(line)
        if task.get("die"):
            sys.exit(3)
        time.sleep(task.get("sleep", 0))
        result = {{"status": "ok", "value": task["value"], "pid": os.getpid()}}
        os.write(1, ({pool.RESULT_MARKER!r} + json.dumps(result) + "\\n").encode())
""")
FAKE_COMMAND = [sys.executable, "-c", FAKE_WORKER]


def test_a_record_says_up_to_date_until_a_source_an_output_or_the_options_change(tmp_path: Path) -> None:
    source, output = tmp_path / "a.smd", tmp_path / "out" / "a.iqe"
    output.parent.mkdir()
    source.write_text("one")
    output.write_text("made")
    record = Record.beside(str(output))
    record.store(str(output), "options 1", [str(source)], [str(output)])
    again = Record.beside(str(output))  # (read back from the folder's record)
    assert again.path == str(output.parent / RECORD_NAME)
    assert again.up_to_date(str(output), "options 1")
    assert not again.up_to_date(str(output), "options 2")
    source.write_text("two!")  # (a new size, a new time)
    assert not again.up_to_date(str(output), "options 1")
    record.store(str(output), "options 1", [str(source)], [str(output)])
    os.remove(output)
    assert not Record.beside(str(output)).up_to_date(str(output), "options 1")
    (output.parent / RECORD_NAME).write_text("{not json")
    assert Record.beside(str(output)).entries == {}  # (a damaged record: everything is made again)


def converted_here(task: pool.Task) -> pool.Result:
    """The batch's own process converting a task: slower than the stand-in workers, so that they take most."""
    time.sleep(task.get("sleep", 0.0) + 0.8)
    return {"status": "ok", "value": task["value"], "pid": os.getpid()}


def test_the_pool_converts_here_and_in_workers_and_replaces_a_worker_that_stops() -> None:
    # (the first file keeps this process busy longer than a worker's start: workers start and take the rest)
    tasks = [{"value": 1, "sleep": pool.WORKER_START_SECONDS}, {"value": 2, "die": True}, {"value": 3},
             {"value": 4}, {"value": 5}]  # fmt: skip
    workers = pool.WorkerPool(FAKE_COMMAND, 2)
    results = dict(workers.run(tasks, converted_here))
    workers.close()
    assert sorted(results) == [0, 1, 2, 3, 4]
    assert results[0]["pid"] == os.getpid()  # (the first is taken here while the workers start)
    assert [results[i].get("value") for i in (0, 2, 3, 4)] == [1, 3, 4, 5]
    assert results[1] == {"status": "failed", "error": "the worker process stopped (exit status 3) before it "
                          "answered"}  # fmt: skip
    assert {results[i]["pid"] for i in (2, 3, 4)} - {os.getpid()}  # (the workers converted, a new one too)
    assert not workers.workers


def test_a_batch_this_process_finishes_alone_starts_no_worker(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    never = pool.WorkerPool([sys.executable, "-c", f"open({str(marker)!r}, 'w')"], 3)
    results = dict(never.run([{"value": 1}, {"value": 2}, {"value": 3}],
                             lambda task: {"status": "ok", "value": task["value"]}))  # fmt: skip
    never.close()
    assert [results[i]["value"] for i in range(3)] == [1, 2, 3]
    assert not marker.exists()  # (three quick files: a worker's start would cost more than it saves)


def test_workers_that_never_start_leave_every_task_to_this_process() -> None:
    broken = pool.WorkerPool([sys.executable, "-c", "import sys; sys.exit(4)"], 2)
    tasks = [{"value": 1, "sleep": pool.WORKER_START_SECONDS}, {"value": 2}, {"value": 3}]  # (workers are started)
    results = dict(broken.run(tasks, converted_here))
    broken.close()
    assert {index: result["value"] for index, result in results.items()} == {0: 1, 1: 2, 2: 3}
    assert {result["pid"] for result in results.values()} == {os.getpid()}


def test_the_batch_hands_results_on_in_input_order_and_records_what_it_made(tmp_path: Path) -> None:
    jobs = []
    for index, sleep in enumerate((0.6, 0.0, 0.3, 0.0)):  # (the first finishes last)
        output = tmp_path / f"{index}.out"
        output.write_text("x")  # (the stand-in workers write nothing)
        jobs.append(Job([f"{index}.in"], str(output), {"value": index, "sleep": sleep}, "f", [], [str(output)]))
    batch = Batch(local=converted_here, command=lambda: FAKE_COMMAND, workers=3)
    order: list[int] = []
    tally = batch.run(jobs, lambda job, result: order.append(result["value"]))
    assert order == [0, 1, 2, 3] and (tally.converted, tally.skipped, tally.failed) == (4, 0, 0)
    record = json.loads((tmp_path / RECORD_NAME).read_text())
    assert len(record["outputs"]) == 4
    statuses: list[str] = []
    tally = batch.run(jobs, lambda job, result: statuses.append(result["status"]))  # (a rerun: nothing to do)
    assert statuses == ["skipped"] * 4 and tally.skipped == 4
    forced = Batch(local=lambda task: {"status": "ok", "value": task["value"]}, command=lambda: FAKE_COMMAND,
                   workers=1, force=True)  # fmt: skip
    assert forced.run(jobs, lambda job, result: None).converted == 4  # (one at a time, in this process)


def test_a_cluster_without_distributed_is_refused_clearly(monkeypatch: pytest.MonkeyPatch) -> None:
    from batch import cluster

    monkeypatch.setitem(sys.modules, "distributed", None)  # (import fails)
    with pytest.raises(cluster.SchedulerUnavailable, match="needs the Python package 'distributed'"):
        list(cluster.run_on_cluster("tcp://127.0.0.1:1", FAKE_COMMAND, [{"value": 1}]))


def test_small_files_go_to_a_cluster_in_groups_that_still_balance_the_load() -> None:
    from batch.cluster import GROUP_SIZE, groups_of

    groups = groups_of(500, 2)
    assert [index for group in groups for index in group] == list(range(500))  # (every input once, in order)
    assert max(map(len, groups)) == GROUP_SIZE and len(groups) >= 8
    assert groups_of(10, 2) == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]  # (several groups per worker thread)
    assert groups_of(3, 16) == [[0], [1], [2]] and groups_of(0, 2) == []
    assert groups_of(5, 0) == groups_of(5, 1)  # (no worker yet: as for one)
