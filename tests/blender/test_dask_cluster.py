"""`convert --scheduler` on a real local Dask cluster (a `dask scheduler` and two `dask worker --nthreads 1`, started
with this venv's Python in the project folder): the bytes, lines and report of a local run, each Dask worker keeping
its Blender process from one batch to the next; a scheduler that cannot be reached is a clear error (exit code 1).
Skipped where the `distributed` package is not installed (only the main venv has it)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("distributed", reason="the 'distributed' package (Dask) is not installed in this venv; "
                    "bash tools/setup.sh main installs it into .venv")  # fmt: skip

from tools.bench_throughput import Cluster, alive, dask_cluster, descendants, free_port, is_worker, make_inputs


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    with dask_cluster(2, tmp_path_factory.mktemp("dask")) as started:
        yield started
    assert not [pid for pid in started.stopped if alive(pid)], "a process of the cluster is still running"


def convert(extension: ModuleType, *argv: str) -> int:
    return int(extension.cli.main(["convert", *argv], prog="iogf"))


def stable(text: str) -> list[str]:
    return [re.sub(r"in [0-9.]+ s\b", "in T s", line) for line in text.splitlines()]


def blender_workers(cluster: Cluster) -> set[int]:
    return {pid for worker in cluster.workers for pid in descendants(worker) if is_worker(pid)}


def test_a_cluster_gives_the_bytes_lines_and_report_of_a_local_run(
    cluster: Cluster, tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    make_inputs(tmp_path / "in", 4, triangles=200, bones=6)
    monkeypatch.chdir(tmp_path)  # (relative paths: the workers run in the project folder, read from here)
    files = [f"in/model{index:04d}.smd" for index in range(4)]
    runs = {}
    for name, how in (("local", ["--jobs", "1"]), ("dask", ["--scheduler", cluster.address])):
        status = convert(extension, *files, "--to", "iqm", "-d", name, *how, "--report", f"{name}.jsonl")
        captured = capsys.readouterr()
        assert status == 0, captured.err
        runs[name] = (stable(captured.out.replace(name, "OUT")), stable(captured.err))
    assert runs["dask"] == runs["local"]
    assert [line for line in runs["dask"][0] if " -> " in line] == [f"{path} -> OUT/model{index:04d}.iqm"
                                                                    for index, path in enumerate(files)]  # fmt: skip
    assert runs["dask"][0][-1] == "4 converted, 0 skipped, 0 failed in T s"
    for index in range(4):
        name = f"model{index:04d}.iqm"
        assert (tmp_path / "dask" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    reports = {name: [json.loads(line) for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()]
               for name in runs}  # fmt: skip
    assert [entry["input"] for entry in reports["dask"]] == files
    assert [(e["status"], e["counts"], e["warnings"]) for e in reports["dask"]] == [
        (e["status"], e["counts"], e["warnings"]) for e in reports["local"]
    ]
    assert reports["dask"][0]["counts"] == {"objects": 2, "triangles": 200, "bones": 6, "actions": 0}

    kept = blender_workers(cluster)
    assert 1 <= len(kept) <= 2  # (a Blender process per Dask worker that had a task)
    assert convert(extension, *files, "--to", "iqm", "-d", "dask", "--scheduler", cluster.address, "--force") == 0
    assert "4 converted" in capsys.readouterr().out
    assert kept <= blender_workers(cluster)  # (the next batch found them running)
    assert convert(extension, *files, "--to", "iqm", "-d", "dask", "--scheduler", cluster.address) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("0 converted, 4 skipped, 0 failed")


def test_a_scheduler_that_cannot_be_reached_is_a_clear_error(
    tmp_path: Path, extension: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    model = make_inputs(tmp_path / "in", 1, triangles=20, bones=2)[0]
    address = f"tcp://127.0.0.1:{free_port()}"  # (nothing listens there)
    assert convert(extension, model, "--to", "iqm", "-d", str(tmp_path / "out"), "--scheduler", address) == 1
    err = capsys.readouterr().err
    assert f"error: {address}: cannot reach the Dask scheduler (nothing answers at 127.0.0.1:" in err
    assert convert(extension, model, "--to", "iqm", "-d", str(tmp_path / "out"), "--scheduler", "tcp://:x") == 2
    assert "argument --scheduler: 'tcp://:x' is not a scheduler address" in capsys.readouterr().err
