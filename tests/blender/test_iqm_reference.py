"""IQM export against the reference compiler (lsalzman/iqm's `iqm`, built by the developer, never shipped).

Set IOGF_IQM_COMPILER to its path to run this; without it the test is skipped: the compiler is optional
tooling and the project must pass without it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from formats import iqm
from tools.compare_iqm import differences
from tools.scene_for_iqm import export_rigged_scene

COMPILER = os.environ.get("IOGF_IQM_COMPILER", "")


@pytest.mark.skipif(not COMPILER, reason="IOGF_IQM_COMPILER (the reference iqm compiler's path) is not set")
def test_iqm_export_decodes_to_what_the_reference_compiler_makes_of_the_iqe_export(tmp_path: Path) -> None:
    iqe_path, iqm_path = export_rigged_scene(tmp_path)
    reference = tmp_path / "reference.iqm"
    subprocess.run([COMPILER, str(reference), str(iqe_path)], check=True, capture_output=True)
    ours, theirs = iqm.read_iqm_model(iqm_path.read_bytes()), iqm.read_iqm_model(reference.read_bytes())
    assert len(theirs.anims) == 2 and theirs.bounds is not None and len(theirs.meshes) == 2
    assert differences(ours, theirs) == []
