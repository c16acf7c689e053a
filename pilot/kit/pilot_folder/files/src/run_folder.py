"""The run folder: one new subfolder of runs/ per try, written so that a crash loses at most the
document in progress.

Every file is replaced atomically (written beside, flushed to disk, then renamed over the old
one): a reader, or a resumed run, sees the results file before or after a document, never half a
record. Rewriting the whole file per document costs nothing for a pilot of twelve; for a batch of
millions keep the same rule with one file per document instead.
"""

import datetime
import json
import os

from inputs import PilotError

RESULTS_FILE = "results.jsonl"
SUMMARY_FILE = "summary.json"


def atomic_write(path, data):
    """Replace `path` by `data` (bytes) in one step, durable before this returns."""
    folder = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(folder, f".{os.path.basename(path)}.tmp-{os.getpid()}")
    with open(temporary, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    _sync_folder(folder)


def _sync_folder(folder):
    """Make the rename itself durable where the system allows it (not on Windows)."""
    flags = getattr(os, "O_DIRECTORY", None)
    if flags is None:
        return
    try:
        descriptor = os.open(folder, os.O_RDONLY | flags)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc)


def default_run_name():
    return now_utc().strftime("%Y-%m-%dT%H%M%SZ")


def create_run_folder(path):
    """Create the try's folder; an existing one is refused, never reused or cleaned."""
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise PilotError("run_parent_missing", path=path)
    try:
        os.mkdir(path)
    except FileExistsError:
        raise PilotError("run_exists", exit_status=3, path=path) from None


def write_results(run_dir, records):
    lines = [json.dumps(record, ensure_ascii=False, sort_keys=True) for record in records]
    data = ("\n".join(lines) + "\n").encode("utf-8") if lines else b""
    atomic_write(os.path.join(run_dir, RESULTS_FILE), data)


def read_results(run_dir):
    """The records of a run folder, in file order (missing file: none yet)."""
    path = os.path.join(run_dir, RESULTS_FILE)
    if not os.path.exists(path):
        return []
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                raise PilotError(
                    "run_bad_results", path=path, problem=f"line {number} is not JSON"
                ) from None
            if not isinstance(record, dict) or not isinstance(record.get("id"), str):
                raise PilotError("run_bad_results", path=path, problem=f"line {number} has no id")
            records.append(record)
    return records


def write_summary(run_dir, summary):
    data = json.dumps(summary, ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    atomic_write(os.path.join(run_dir, SUMMARY_FILE), data.encode("utf-8"))


def read_summary(run_dir):
    path = os.path.join(run_dir, SUMMARY_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            summary = json.load(handle)
    except (OSError, ValueError):
        raise PilotError("run_not_a_run", path=run_dir) from None
    if not isinstance(summary, dict) or not isinstance(summary.get("run_id"), str):
        raise PilotError("run_not_a_run", path=run_dir)
    return summary
