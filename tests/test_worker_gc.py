"""A worker process, once started, moves what it loaded out of the cycle collector's reach
(config.celery_app.freeze_startup_objects): each full collection walked ~140,000 objects, and a
chain scan of 20,800 transfers set off one or two (profiled in bench/watcher.py). Checked in a
fresh interpreter set up as `celery -A config.celery_app worker` sets itself up, at each of the
two signals a worker sends: the main process's (solo and thread pools) and a prefork pool
process's."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("signal", ["worker_init", "worker_process_init"])
def test_a_started_worker_keeps_its_startup_objects_out_of_the_collector(signal):
    code = (
        "import gc, django\n"
        "django.setup()\n"
        "import config.celery_app\n"
        f"from celery.signals import {signal} as signal\n"
        "before = gc.get_freeze_count()\n"
        "signal.send(sender=None)\n"
        "print(before, gc.get_freeze_count(), len(gc.get_objects()))\n"
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    before, frozen, still_tracked = map(int, result.stdout.split())
    assert frozen > before + 50_000  # Django, the apps, Celery: all of it
    assert still_tracked < frozen // 10  # what a full collection still walks
