"""Read a KernelGenBench run directory (or an archive of one) into kernel uploads (PROTOCOL section 10).

A run directory holds ``kernels/<ns>__<op>.py`` (one file per operator), ``progress.json`` (per-operator
status, time and token usage) and ``results.json`` (the original harness's own verdicts). This module only
*reads*: it turns files into ``KernelUpload`` objects plus a list of problems, each naming its file. Whether
the uploads are acceptable (known operator, entry points, quota) is ``leaderboard.services.submission_create``'s
decision. Archives are read in memory, never extracted to disk, so a crafted path cannot escape anywhere.

Reusable by any upload path: ``read_run_files`` takes ``{relative path: bytes}``, ``read_run_archive`` takes
an uploaded zip / tar(.gz) file's bytes, ``read_run_directory`` takes a folder on disk.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from django.conf import settings

from leaderboard.bounded_json import JSONRejected, loads_bounded
from leaderboard.services import MAX_TOKEN_COUNT, KernelUpload, SubmissionRejected, decode_kernel_file
from leaderboard.uploads import operator_id_from_filename  # the one file-name rule of every upload path

TOKEN_FIELDS: dict[str, tuple[str, ...]] = {  # KernelUpload field -> names seen in progress.json files
    "input_tokens": ("input_tokens", "input"),
    "output_tokens": ("output_tokens", "output"),
    "cache_creation_tokens": ("cache_creation", "cache_creation_tokens", "cache_creation_input_tokens"),
    "cache_read_tokens": ("cache_read", "cache_read_tokens", "cache_read_input_tokens"),
    "total_tokens": ("total", "total_tokens"),
}


@dataclass
class RunImport:
    """What a run directory holds, read but not yet validated against the catalog."""

    uploads: list[KernelUpload] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    run_token_usage: dict[str, Any] = field(default_factory=dict)
    # Operators progress.json lists without a kernel file: their tokens cannot be attached to a kernel.
    operators_without_file: list[str] = field(default_factory=list)
    original_statuses: dict[str, str] = field(default_factory=dict)  # results.json: operator id -> status

    def summary_note(self) -> str:
        """A line for the submission's notes: where it came from and what could not be attached."""
        parts = [f"imported from a KernelGenBench run directory ({len(self.uploads)} kernel files)"]
        if self.operators_without_file:
            parts.append(f"{len(self.operators_without_file)} operators in progress.json had no kernel file")
        if self.run_token_usage.get("total") is not None:
            parts.append(f"run-level tokens: {self.run_token_usage['total']}")
        return "; ".join(parts)


def read_run_files(files: Mapping[str, bytes]) -> RunImport:
    """Read a run from ``{path relative to anywhere: content}``; the run's root is where ``kernels/`` is."""
    paths = {_clean(path): data for path, data in files.items() if _clean(path)}
    root = _find_root(paths)
    result = RunImport()
    progress = _read_json(paths, root / "progress.json", result)
    results = _read_json(paths, root / "results.json", result)
    per_operator_progress = _per_operator(progress)
    result.original_statuses = {
        op: str(entry.get("status", ""))
        for op, entry in _per_operator(results).items()
        if isinstance(entry, dict) and entry.get("status")
    }
    if isinstance(progress, dict) and isinstance(progress.get("token_usage"), dict):
        result.run_token_usage = progress["token_usage"]

    kernel_dir = root / "kernels"
    candidates = sorted(path for path in paths if path.parent == kernel_dir and path.suffix == ".py")
    if not candidates:  # a flat archive of kernel files is accepted too
        candidates = sorted(path for path in paths if path.parent == root and path.suffix == ".py")
    for path in candidates:
        label = str(path.relative_to(root)) if root != PurePosixPath(".") else str(path)
        operator_id = operator_id_from_filename(path.name)
        if operator_id is None:
            result.problems.append(
                f"{label}: not a kernel file name (expected <namespace>__<operator>.py, e.g. aten__cos.py)"
            )
            continue
        try:
            source_code = decode_kernel_file(data=paths[path], filename=label)
        except SubmissionRejected as rejected:
            result.problems.extend(rejected.problems)
            continue
        upload = KernelUpload(operator_id=operator_id, source_code=source_code, filename=label)
        entry = _lookup(per_operator_progress, operator_id)
        if entry:
            _apply_progress(upload, entry, label, result)
        status = _lookup(result.original_statuses, operator_id)
        if status:
            upload.extra["original_status"] = status
        result.uploads.append(upload)
    uploaded = {upload.operator_id for upload in result.uploads}
    result.operators_without_file = sorted(
        _as_operator_id(key) for key in per_operator_progress if _as_operator_id(key) not in uploaded
    )
    if not candidates and not result.problems:
        result.problems.append("no kernel files found (expected kernels/<namespace>__<operator>.py)")
    return result


def read_run_directory(directory: Path) -> RunImport:
    """Read a run directory on disk (only the files a run directory holds; per-case logs are skipped)."""
    directory = Path(directory)
    if not directory.is_dir():
        return RunImport(problems=[f"{directory}: not a directory"])
    files: dict[str, bytes] = {}
    for name in ("progress.json", "results.json"):
        if (directory / name).is_file():
            files[name] = (directory / name).read_bytes()
    kernel_dir = directory / "kernels"
    for path in sorted(kernel_dir.glob("*.py") if kernel_dir.is_dir() else directory.glob("*.py")):
        files[str(path.relative_to(directory))] = path.read_bytes()
    return read_run_files(files)


def read_run_archive(*, data: bytes, filename: str) -> RunImport:
    """Read a zip or tar(.gz/.bz2/.xz) of a run directory, in memory, with the batch upload's hardened reader
    (leaderboard.uploads: bounded reads whatever the headers claim, links and climbing names refused)."""
    from leaderboard.uploads import ArchiveError, archive_members

    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if len(data) > limit:
        return RunImport(problems=[f"{filename}: archive too large ({len(data)} bytes; the limit is {limit})"])
    problems: list[str] = []
    try:
        members = archive_members(data=data, filename=filename, problems=problems)
    except ArchiveError as exc:
        return RunImport(problems=[f"{filename}: {exc}"])
    result = read_run_files({member.name: member.data for member in members if _wanted(member.name)})
    result.problems = problems + result.problems
    return result


# --- Internals ------------------------------------------------------------------------------------------


def _wanted(name: str) -> bool:
    """Only what a run directory's import reads: python files and the two json files. Skips logs."""
    path = _clean(name)
    return bool(path) and (path.suffix == ".py" or path.name in ("progress.json", "results.json"))


def _clean(path: str) -> PurePosixPath | None:
    """A normalised relative path; None for metadata, hidden files and anything climbing out with '..'."""
    parts = [part for part in path.replace("\\", "/").split("/") if part not in ("", ".")]
    if not parts or ".." in parts or any(part.startswith(".") or part in ("__MACOSX", "__pycache__") for part in parts):
        return None
    return PurePosixPath(*parts)


def _find_root(paths: Mapping[PurePosixPath, bytes]) -> PurePosixPath:
    """The shallowest folder that has a ``kernels/`` folder or a progress.json; else the shallowest folder."""
    markers = [path.parent.parent for path in paths if path.parent.name == "kernels" and path.suffix == ".py"]
    markers += [path.parent for path in paths if path.name == "progress.json"]
    if not markers:
        folders = [path.parent for path in paths if path.suffix == ".py"]
        markers = folders or [PurePosixPath(".")]
    return min(markers, key=lambda folder: (len(folder.parts), str(folder)))


def _read_json(paths: Mapping[PurePosixPath, bytes], path: PurePosixPath, result: RunImport) -> Any:
    if path not in paths:
        return None
    try:
        return loads_bounded(paths[path])
    except JSONRejected as exc:
        result.problems.append(f"{path.name}: {exc}")
        return None


def _per_operator(document: Any) -> dict[str, Any]:
    """The per-operator mapping of progress.json / results.json, wherever the file keeps it."""
    if not isinstance(document, dict):
        return {}
    for key in ("operators", "ops", "progress", "results", "per_operator"):
        if isinstance(document.get(key), dict):
            return document[key]
        if isinstance(document.get(key), list):
            return {
                str(item.get("operator") or item.get("op") or item.get("name")): item
                for item in document[key]
                if isinstance(item, dict)
            }
    return {key: value for key, value in document.items() if isinstance(value, dict) and key != "token_usage"}


def _as_operator_id(key: str) -> str:
    if "::" in key:
        return key
    return operator_id_from_filename(key if key.endswith(".py") else key + ".py") or key


def _lookup(mapping: Mapping[str, Any], operator_id: str) -> Any:
    """The entry for an operator whether the file keys it ``aten::cos``, ``aten__cos`` or ``cos``."""
    namespace, _, name = operator_id.partition("::")
    for key in (operator_id, f"{namespace}__{name}", f"{namespace}__{name}.py", name):
        if key in mapping:
            return mapping[key]
    return None


def _apply_progress(upload: KernelUpload, entry: Any, label: str, result: RunImport) -> None:
    if not isinstance(entry, dict):
        return
    usage = entry.get("token_usage") if isinstance(entry.get("token_usage"), dict) else entry
    for field_name, names in TOKEN_FIELDS.items():
        value = next((usage[name] for name in names if usage.get(name) is not None), None)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_TOKEN_COUNT:
            result.problems.append(
                f"{label}: progress.json has a bad {field_name} ({value!r}; expected a count "
                f"from 0 to {MAX_TOKEN_COUNT})"
            )
            continue
        setattr(upload, field_name, int(value))
    seconds = entry.get("duration_seconds")
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and math.isfinite(seconds) and seconds >= 0:
        upload.solve_seconds = float(seconds)
    if entry.get("status"):
        upload.extra["progress_status"] = str(entry["status"])
