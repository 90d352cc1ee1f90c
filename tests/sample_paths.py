"""Where the shared real-world samples live: ../shared/samples by default, or $IOGF_SAMPLES."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLES_ROOT = Path(os.environ.get("IOGF_SAMPLES", REPO_ROOT.parent / "shared" / "samples"))


def sample_dir(format_name: str) -> Path:
    """The samples folder of one format; skips the calling test when it is absent (a bare clone)."""
    folder = SAMPLES_ROOT / format_name
    if not folder.is_dir():
        pytest.skip(f"shared samples not found at {folder} (set IOGF_SAMPLES to the samples folder)")
    return folder


def sample_files(format_name: str, *suffixes: str) -> list[Path]:
    """Sample files of one format with the given suffixes, for parametrising; empty when absent."""
    folder = SAMPLES_ROOT / format_name
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix.lower() in suffixes)
