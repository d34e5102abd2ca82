"""Reading a batch upload: a zip or tar of ``<namespace>__<op>.py`` kernels, with optional token usage.

``parse_upload`` turns the bytes into ``KernelUpload`` objects for ``services.submission_create``, or raises
``UploadProblems`` listing every problem, each naming its file. It never writes to disk: members are read into
memory under caps on file count and total uncompressed size (a zip bomb stops at the cap, whatever its
headers claim), and names that climb out of the archive, absolute names and links are refused.
"""

from __future__ import annotations

import csv
import io
import re
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings

from leaderboard.bounded_json import loads_bounded
from leaderboard.services import KernelUpload, check_kernel_uploads

# ``aten__cos.py`` -> aten::cos; the op part may itself start with underscores (``aten___softmax.py``).
KERNEL_NAME = re.compile(r"^(?P<namespace>aten|vllm13|cublas)__(?P<op>[A-Za-z0-9_.]+)\.py$")
USAGE_NAMES = ("progress.json", "usage.json", "usage.csv", "tokens.json", "tokens.csv")
TOKEN_FIELDS = {
    "input_tokens": ("input_tokens", "input"),
    "output_tokens": ("output_tokens", "output"),
    "cache_creation_tokens": ("cache_creation", "cache_creation_tokens", "cache_creation_input_tokens"),
    "cache_read_tokens": ("cache_read", "cache_read_tokens", "cache_read_input_tokens"),
    "total_tokens": ("total", "total_tokens"),
}
SECONDS_FIELDS = ("duration_seconds", "solve_seconds", "seconds")


def max_archive_bytes() -> int:
    return int(getattr(settings, "KGB_MAX_ARCHIVE_BYTES", 64 * 1024 * 1024))


def max_archive_files() -> int:
    return int(getattr(settings, "KGB_MAX_ARCHIVE_FILES", 2000))


class UploadProblems(Exception):
    """The upload cannot be accepted; ``problems`` names each offending file. Nothing was saved."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass
class Member:
    name: str
    data: bytes


class ArchiveError(Exception):
    pass


def operator_id_from_filename(name: str) -> str | None:
    """``kernels/aten__cos.py`` -> ``aten::cos``; None when the name does not follow the convention."""
    match = KERNEL_NAME.match(PurePosixPath(name).name)
    return f"{match['namespace']}::{match['op']}" if match else None


def _unsafe_name(name: str) -> str | None:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or re.match(r"^[A-Za-z]:", name):
        return "absolute path"
    if ".." in path.parts:
        return "path traversal (..)"
    return None


def _zip_members(data: bytes, problems: list[str]) -> Iterator[Member]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise ArchiveError(f"broken zip archive ({exc})") from None
    infos = [info for info in archive.infolist() if not info.is_dir()]
    if len(infos) > max_archive_files():
        raise ArchiveError(f"too many files ({len(infos)}; the limit is {max_archive_files()})")
    budget = max_archive_bytes()
    for info in infos:
        unsafe = _unsafe_name(info.filename)
        if unsafe:
            problems.append(f"{info.filename}: refused, {unsafe}")
            continue
        if (info.external_attr >> 16) & 0o170000 == 0o120000:
            problems.append(f"{info.filename}: refused, symbolic link")
            continue
        try:
            with archive.open(info) as handle:
                # Read at most what is left of the budget (+1 to notice overflow): headers can lie.
                content = handle.read(budget + 1)
        except (zipfile.BadZipFile, OSError, EOFError, RuntimeError, NotImplementedError, ValueError) as exc:
            problems.append(f"{info.filename}: broken archive member ({exc})")
            continue
        budget -= len(content)
        if budget < 0:
            raise ArchiveError(f"uncompressed contents exceed {max_archive_bytes()} bytes (at {info.filename})")
        yield Member(info.filename, content)


def _tar_members(data: bytes, problems: list[str]) -> Iterator[Member]:
    try:
        archive = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")  # noqa: SIM115 (in memory; read to the end below)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ArchiveError(f"broken tar archive ({exc})") from None
    budget = max_archive_bytes()
    count = 0
    try:
        for info in archive:
            if info.isdir():
                continue
            count += 1
            if count > max_archive_files():
                raise ArchiveError(f"too many files (more than {max_archive_files()})")
            unsafe = _unsafe_name(info.name)
            if unsafe:
                problems.append(f"{info.name}: refused, {unsafe}")
                continue
            if not info.isfile():
                problems.append(f"{info.name}: refused, not a regular file (link or device)")
                continue
            budget -= info.size
            if budget < 0:
                raise ArchiveError(f"uncompressed contents exceed {max_archive_bytes()} bytes (at {info.name})")
            handle = archive.extractfile(info)
            yield Member(info.name, handle.read() if handle else b"")
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        raise ArchiveError(f"broken tar archive ({exc})") from None


def archive_members(*, data: bytes, filename: str, problems: list[str]) -> list[Member]:
    """Every regular file of the archive (or the single file uploaded), under the caps."""
    lower = filename.lower()
    if lower.endswith(".py"):
        return [Member(PurePosixPath(filename).name, data)]
    if lower.endswith(".zip") or data[:4] == b"PK\x03\x04":
        return list(_zip_members(data, problems))
    if lower.endswith((".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")) or tarfile_like(data):
        return list(_tar_members(data, problems))
    raise ArchiveError("not a zip or tar archive, nor a .py file")


def tarfile_like(data: bytes) -> bool:
    return data[:2] == b"\x1f\x8b" or data[257:262] == b"ustar" or data[:3] == b"BZh" or data[:6] == b"\xfd7zXZ\x00"


# --- Token usage ----------------------------------------------------------------------------------------


def _int(value: Any) -> int | None:
    # Out-of-range counts are kept as read: submission_create names them (a huge float's int() overflows).
    try:
        return int(value) if value not in (None, "") else None
    except (TypeError, ValueError, OverflowError):
        return None


def _float(value: Any) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except (TypeError, ValueError, OverflowError):
        return None


def _usage_entry(record: dict) -> dict[str, Any]:
    """One operator's usage from a progress.json entry ({token_usage: {...}, duration_seconds}) or a flat row."""
    tokens = record.get("token_usage") if isinstance(record.get("token_usage"), dict) else record
    entry: dict[str, Any] = {}
    for field_name, keys in TOKEN_FIELDS.items():
        value = next((_int(tokens.get(key)) for key in keys if _int(tokens.get(key)) is not None), None)
        if value is not None:
            entry[field_name] = value
    seconds = next((_float(record.get(key)) for key in SECONDS_FIELDS if _float(record.get(key)) is not None), None)
    if seconds is not None:
        entry["solve_seconds"] = seconds
    if isinstance(record.get("status"), str):
        entry["status"] = record["status"]
    return entry


def _operator_key(raw: str) -> str:
    """``aten::cos``, ``aten__cos`` and ``aten__cos.py`` all name ``aten::cos``."""
    raw = PurePosixPath(str(raw).strip()).name
    if raw.endswith(".py"):
        raw = raw[:-3]
    if "::" not in raw and "__" in raw:
        namespace, _, op = raw.partition("__")
        raw = f"{namespace}::{op}"
    return raw


def parse_usage(*, data: bytes, filename: str) -> dict[str, dict[str, Any]]:
    """Per operator key, its token usage and solving time. Understands KernelGenBench's progress.json as is,
    a JSON mapping or list of per-operator records, and a CSV with an ``operator`` column."""
    text = data.decode("utf-8")
    if filename.lower().endswith(".csv"):
        rows = list(csv.DictReader(io.StringIO(text)))
        key_column = next((c for c in ("operator_id", "operator", "op", "file", "name") if rows and c in rows[0]), None)
        if key_column is None:
            raise ValueError("the CSV needs an operator_id (or operator, op, file) column")
        return {_operator_key(row[key_column]): _usage_entry(row) for row in rows if row.get(key_column)}
    document = loads_bounded(text)  # depth, integer size and finite numbers bounded (a JSONRejected)
    if isinstance(document, dict):
        for container in ("operators", "ops", "tasks", "results", "progress", "kernels"):
            if isinstance(document.get(container), (dict, list)):
                document = document[container]
                break
    records: list[tuple[str, dict]] = []
    if isinstance(document, dict):
        records = [(key, value) for key, value in document.items() if isinstance(value, dict)]
    elif isinstance(document, list):
        for item in document:
            if isinstance(item, dict):
                key = next(
                    (
                        item[k]
                        for k in ("operator_id", "operator", "op", "op_name", "name", "file")
                        if isinstance(item.get(k), str)
                    ),
                    None,
                )
                if key:
                    records.append((key, item))
    else:
        raise ValueError("expected a JSON object or list of per-operator records")
    return {_operator_key(key): _usage_entry(record) for key, record in records}


# --- The whole upload ------------------------------------------------------------------------------------


def parse_upload(
    *, data: bytes, filename: str, usage_data: bytes | None = None, usage_filename: str = "", check: bool = True
) -> list[KernelUpload]:
    """The kernels of an upload with their usage; UploadProblems with every problem otherwise.

    With ``check``, the service's own checks (unknown or duplicate operator, missing entry points, size)
    run too, so every problem shows at once rather than one round at a time.
    """
    uploads, problems = read_upload(data=data, filename=filename, usage_data=usage_data, usage_filename=usage_filename)
    if check and uploads:
        service_problems, _ = check_kernel_uploads(uploads=uploads)
        problems.extend(service_problems)
    if problems:
        raise UploadProblems(problems)
    return uploads


def read_upload(
    *, data: bytes, filename: str, usage_data: bytes | None = None, usage_filename: str = ""
) -> tuple[list[KernelUpload], list[str]]:
    """The kernels the upload's files hold, and every problem found reading them (each naming its file).

    Only reading: whether the kernels are acceptable is ``submission_create``'s decision, taken once.
    """
    problems: list[str] = []
    try:
        members = archive_members(data=data, filename=filename, problems=problems)
    except ArchiveError as exc:
        return [], [f"{filename}: {exc}"]
    uploads: list[KernelUpload] = []
    usage: dict[str, dict[str, Any]] = {}
    usage_sources = [
        (member.name, member.data) for member in members if PurePosixPath(member.name).name.lower() in USAGE_NAMES
    ]
    if usage_data is not None:
        usage_sources.append((usage_filename or "usage file", usage_data))
    for name, content in usage_sources:
        try:
            usage.update(parse_usage(data=content, filename=name))
        except (UnicodeDecodeError, ValueError, KeyError) as exc:
            problems.append(f"{name}: token usage not understood ({exc})")
    limit = settings.KGB_MAX_KERNEL_BYTES
    for member in members:
        if not member.name.lower().endswith(".py"):
            continue  # results.json, logs, READMEs: not kernels
        operator_id = operator_id_from_filename(member.name)
        if operator_id is None:
            problems.append(f"{member.name}: not named <namespace>__<op>.py (e.g. aten__cos.py, vllm13__rms_norm.py)")
            continue
        if len(member.data) > limit:
            problems.append(f"{member.name}: too large ({len(member.data)} bytes; the limit is {limit})")
            continue
        try:
            source_code = member.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(f"{member.name}: not UTF-8 text ({exc.reason} at byte {exc.start})")
            continue
        entry = usage.get(operator_id, {})
        uploads.append(
            KernelUpload(
                operator_id=operator_id,
                source_code=source_code,
                filename=member.name,
                **{key: value for key, value in entry.items() if key != "status"},
                extra={"reported_status": entry["status"]} if "status" in entry else {},
            )
        )
    if not uploads and not problems:
        problems.append(f"{filename}: no kernel files (<namespace>__<op>.py) found")
    return uploads, problems
