"""The shipped scripts on the oldest Python they promise (3.8), where this machine has one:
parsing with feature_version=(3, 8) does not catch a call to a newer library function."""

import glob
import os
import shutil
import subprocess

import pytest

from .conftest import check, classify, run

CANDIDATES = [
    os.environ.get("PILOT_PYTHON38", ""),
    shutil.which("python3.8") or "",
    *sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.8*/bin/python3.8"))),
    "/usr/bin/python3.8",
    "/usr/local/bin/python3.8",
]


def python38() -> str | None:
    for candidate in CANDIDATES:
        if not candidate or not os.path.exists(candidate):
            continue
        probe = subprocess.run(
            [candidate, "-c", "import sys; print(sys.version_info[:2] == (3, 8))"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if probe.stdout.strip() == "True":
            return candidate
    return None


PYTHON38 = python38()
needs_38 = pytest.mark.skipif(PYTHON38 is None, reason="no Python 3.8 interpreter on this machine")


@needs_38
def test_the_whole_pilot_runs_on_python_38(kit_it):
    ran = classify(kit_it, "--run-dir", "runs/prova-01", python=PYTHON38)
    assert ran.returncode == 0, ran.stderr
    status = classify(kit_it, "--status", "runs/prova-01", python=PYTHON38)
    assert status.returncode == 0, status.stderr
    again = classify(kit_it, "--run-dir", "runs/prova-01", python=PYTHON38)
    assert again.returncode == 3

    checked = check(kit_it, "runs/prova-01", python=PYTHON38)
    assert checked.returncode == 0, checked.stderr
    assert "Esito: OK." in checked.stdout


@needs_38
def test_kernodeck_runs_on_python_38(kit):
    passed = run(kit, "kernodeck/resume_test.py", python=PYTHON38)
    failed = run(kit, "kernodeck/resume_test.py", "--omit", "optimizer", python=PYTHON38)

    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Verdict: OK." in passed.stdout
    assert failed.returncode == 1
    assert "leaves out the optimizer state" in failed.stdout
