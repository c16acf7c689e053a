"""The pilot folder as the customer gets it: built for a real order, unpacked, run for real.

Every shipped script runs in a subprocess of the interpreter the tests use (Python >= 3.8 is
all they need), from the unpacked folder, as the README tells the customer to.
"""

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from pilot.kit.pilot_folder import build_pilot_zip

TIMEOUT = 120


@pytest.fixture
def h100_order(catalogue, customer, place_order):
    return place_order(customer, catalogue["h100"], lots=2)


@pytest.fixture
def mi300x_order(catalogue, customer, place_order):
    return place_order(customer, catalogue["mi300x"], lots=1)


def unpack(data: bytes, into: Path) -> Path:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        archive.extractall(into)
        top = {name.split("/")[0] for name in archive.namelist()}
    assert len(top) == 1, top
    return into / top.pop()


@pytest.fixture
def make_kit(tmp_path):
    """Unpack the order's kit in a folder of its own; returns the kit's top folder."""
    count = iter(range(1, 1000))

    def make(order, language="en") -> Path:
        return unpack(
            build_pilot_zip(order=order, language=language), tmp_path / f"kit-{next(count)}"
        )

    return make


@pytest.fixture
def kit(make_kit, h100_order) -> Path:
    return make_kit(h100_order, "en")


@pytest.fixture
def kit_it(make_kit, h100_order) -> Path:
    return make_kit(h100_order, "it")


def run(kit: Path, *args, python: str = sys.executable) -> subprocess.CompletedProcess:
    """A shipped script, run from the kit's folder as the customer does."""
    environment = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [python, *map(str, args)],
        cwd=kit,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=environment,
    )


def classify(kit: Path, *args, **kwargs) -> subprocess.CompletedProcess:
    return run(kit, "src/classify.py", *args, **kwargs)


def check(kit: Path, *args, **kwargs) -> subprocess.CompletedProcess:
    return run(kit, "check_pilot.py", *args, **kwargs)


def problems(output: str) -> list[str]:
    """The failures check_pilot.py listed, one per '  - ' line."""
    return [line[4:] for line in output.splitlines() if line.startswith("  - ")]


def read_records(run_dir: Path) -> list[dict]:
    text = (run_dir / "results.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def write_records(run_dir: Path, records: list[dict]) -> None:
    lines = [json.dumps(record, sort_keys=True) for record in records]
    (run_dir / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def read_summary(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))


def write_summary(run_dir: Path, summary: dict) -> None:
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")


@pytest.fixture
def finished_run(kit) -> Path:
    """A complete try of the shipped classifier in runs/try-01."""
    finished = classify(kit, "--run-dir", "runs/try-01")
    assert finished.returncode == 0, finished.stderr
    return kit / "runs" / "try-01"
