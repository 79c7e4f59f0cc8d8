"""What an episode keeps in its folder beside the trajectory (see "Kept artifacts" in :mod:`mle_env.env`): the
graded submission, grade.json, and ./code and ./logs copied out of the sandbox under a byte and a file cap.
Nothing here ever raises for what the agent left: a failure is listed under ``errors`` in the trajectory's
footer, and the grade and status stand."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mle_env.grading.report import GradeReport
    from mle_env.sandbox.base import Sandbox

SUBMISSION_NAME, GRADE_NAME = "submission.csv", "grade.json"
KEPT_FOLDERS = ("code", "logs")


class ArtifactKeeper:
    """Keeps one episode's artifacts in ``folder``: at most ``max_bytes`` of ./code and ./logs together (0:
    none) and ``max_files`` files per folder."""

    def __init__(self, folder: Path, max_bytes: int, max_files: int) -> None:
        self.folder, self.max_bytes, self.max_files = folder, max_bytes, max_files
        self.kept: dict[str, Any] = {}  # the footer's "artifacts": name -> file, or folder -> counts

    def keep_file(self, source: Path, name: str) -> None:
        """Copy ``source`` (a file on the host, e.g. the copied-out submission) into the folder as ``name``."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, self.folder / name)
            self.kept[name.split(".")[0]] = name
        except OSError as e:
            self.kept.setdefault("errors", []).append(f"{name}: {e}")

    def finish(self, sandbox: Sandbox | None, status: str, report: GradeReport | None,
               disclosure: dict[str, Any] | None = None) -> dict[str, Any]:
        """grade.json (the report, with the episode's ``disclosure``), then ./code and ./logs (capped; not
        after an infrastructure error, nor without a sandbox) into the folder; returns what was kept (the
        trajectory footer's ``artifacts``)."""
        errors: list[str] = self.kept.setdefault("errors", [])
        if report is not None:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                graded = {**report.to_dict(), **({"disclosure": disclosure} if disclosure is not None else {})}
                (self.folder / GRADE_NAME).write_text(json.dumps(graded, indent=2, default=str) + "\n")
                self.kept["grade"] = GRADE_NAME
            except (OSError, TypeError, ValueError) as e:
                errors.append(f"{GRADE_NAME}: {e}")
        left = self.max_bytes
        if sandbox is not None and status != "infra_error" and left > 0:
            for part in KEPT_FOLDERS:
                try:
                    with sandbox.copy_tree(part, max(0, left), self.max_files) as archive:
                        files, size, truncated = extract_tree(archive, self.folder / part, max(0, left))
                except Exception as e:  # noqa: BLE001 - whatever fails here, the grade and status stand
                    errors.append(f"{part}/: {type(e).__name__}: {e}")
                    continue
                left -= size
                self.kept[part] = {"files": files, "bytes": size, "truncated": truncated}
        if not errors:
            del self.kept["errors"]
        return self.kept


def extract_tree(archive: IO[bytes], target: Path, max_bytes: int) -> tuple[int, int, bool]:
    """Unpack a ``Sandbox.copy_tree`` archive (read as a stream) into ``target``: regular files with safe
    relative names only, at most ``max_bytes`` of content; returns (files, bytes, whether anything was left
    out)."""
    target.mkdir(parents=True, exist_ok=True)
    files = size = 0
    truncated = False
    with tarfile.open(fileobj=archive, mode="r|") as tar:
        for member in tar:
            parts = Path(member.name).parts
            if (not member.isfile() or not parts or Path(member.name).is_absolute() or ".." in parts
                    or "\x00" in member.name):
                continue
            if member.name == "TRUNCATED.txt":
                truncated = True
            if member.size > max_bytes - size:
                truncated = True
                continue
            data = tar.extractfile(member)
            if data is None:
                continue
            dest = target.joinpath(*parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            with dest.open("wb") as out:
                shutil.copyfileobj(data, out, 1 << 20)
            files += 1
            size += member.size
            tar.members.clear()  # a stream needs no index of what it passed
    return files, size, truncated
