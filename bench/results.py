"""Where each bench script leaves its figures for issue 24's table (bench/table.py).

Each script calls `record(key, ratios, ...)` with the per-round values of one figure; the
median, min and max go to var/bench/results.json (one file, keys merged, the latest run of a key
wins), and bench/table.py, last in `make bench`, prints every figure beside the one measured
before the work (the issue's own measurements) and its target. Nothing here asserts a time.
"""

import json
import os
import statistics
import time
from pathlib import Path

RESULTS = Path(
    os.environ.get(
        "BENCH_RESULTS", Path(__file__).resolve().parent.parent / "var/bench/results.json"
    )
)


def record(key: str, values, *, unit: str = "x", note: str = "") -> dict:
    """Stores the median, min and max of `values` under `key`; returns what it stored."""
    values = [float(value) for value in values]
    entry = {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "rounds": len(values),
        "unit": unit,
        "note": note,
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    try:
        stored = json.loads(RESULTS.read_text())
    except (FileNotFoundError, ValueError):
        stored = {}
    stored[key] = entry
    temporary = RESULTS.with_suffix(".tmp")
    temporary.write_text(json.dumps(stored, indent=2, sort_keys=True) + "\n")
    temporary.replace(RESULTS)
    return entry


def load() -> dict:
    try:
        return json.loads(RESULTS.read_text())
    except (FileNotFoundError, ValueError):
        return {}
