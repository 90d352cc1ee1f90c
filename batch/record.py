"""What `convert` made and from what, kept beside the outputs (`.iogf-convert.json` in their folder), so that a
rerun skips an output that is up to date without opening any input in Blender: one made with the same options
and extension version from files that have not changed since (size and modification time), all of whose files
are still there.

The record is saved on its first change, then at most once a second (SAVE_SECONDS: a rewrite per file would make a
batch quadratic in its size), and when the batch ends, interrupted too; a batch killed outright loses at most its
last second's entries, whose files a rerun converts again."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

RECORD_NAME = ".iogf-convert.json"
RECORD_VERSION = 1
SAVE_SECONDS = 1.0


def file_state(path: str) -> list[int] | None:
    """Size and modification time (ns) of a file, None when it is not there."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return [status.st_size, status.st_mtime_ns]


def record_path(output: str) -> str:
    """The record of the folder `output` is written into."""
    return os.path.join(os.path.dirname(os.path.abspath(output)), RECORD_NAME)


def _key(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))


@dataclass
class Record:
    """The conversions made into one folder, by output."""

    path: str
    entries: dict[str, dict[str, object]] = field(default_factory=dict)
    unsaved: bool = False
    saved_at: float | None = None  # (time.monotonic() of the last save)

    @classmethod
    def beside(cls, output: str) -> Record:
        """The record of the folder `output` is written into (empty when there is none, or it cannot be read:
        everything is then converted again)."""
        path = record_path(output)
        try:
            with open(path, encoding="utf-8") as stream:
                data = json.load(stream)
        except (OSError, ValueError):
            return cls(path)
        if not isinstance(data, dict) or data.get("version") != RECORD_VERSION:
            return cls(path)
        entries = data.get("outputs")
        return cls(path, entries if isinstance(entries, dict) else {})

    def up_to_date(self, output: str, fingerprint: str) -> bool:
        """Whether `output` was made with `fingerprint` (options and extension version) from files unchanged since,
        and every file it wrote is still as it was written."""
        entry = self.entries.get(_key(output))
        if not isinstance(entry, dict) or entry.get("fingerprint") != fingerprint:
            return False
        sources, outputs = entry.get("sources"), entry.get("outputs")
        if not isinstance(sources, dict) or not isinstance(outputs, dict) or not outputs:
            return False
        return all(file_state(path) == state for path, state in (*sources.items(), *outputs.items()))

    def outputs_of(self, output: str) -> list[str]:
        """The files the conversion to `output` wrote, as recorded (absolute paths)."""
        entry = self.entries.get(_key(output))
        outputs = entry.get("outputs") if isinstance(entry, dict) else None
        return [str(path) for path in outputs] if isinstance(outputs, dict) else []

    def store(self, output: str, fingerprint: str, sources: Iterable[str], outputs: Iterable[str]) -> None:
        """Note a conversion just made (`outputs`: the files it wrote that exist); saved at once if the last save
        was SAVE_SECONDS ago or more, else by a later change or `flush`."""
        self.entries[_key(output)] = {
            "fingerprint": fingerprint,
            "sources": {_key(path): file_state(path) for path in dict.fromkeys(sources)},
            "outputs": {_key(path): state for path in outputs if (state := file_state(path)) is not None},
        }
        self._changed()

    def forget(self, output: str) -> None:
        if self.entries.pop(_key(output), None) is not None:
            self._changed()

    def _changed(self) -> None:
        self.unsaved = True
        if self.saved_at is None or time.monotonic() - self.saved_at >= SAVE_SECONDS:
            self.save()

    def flush(self) -> None:
        """Save what is not saved yet (the batch's end)."""
        if self.unsaved:
            self.save()

    def save(self) -> None:
        """Written beside and renamed into place: a reader never sees half a record. (Not formats.atomic: this
        package has no bpy and no package above it in its tests; a record is a cache, kept simple.)"""
        text = json.dumps({"version": RECORD_VERSION, "outputs": self.entries}, indent=1, sort_keys=True) + "\n"
        handle, temporary = tempfile.mkstemp(prefix=".iogf-convert.", suffix=".tmp", dir=os.path.dirname(self.path))
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                stream.write(text)
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        self.unsaved, self.saved_at = False, time.monotonic()
