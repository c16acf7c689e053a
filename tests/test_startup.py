"""No process assumes its settings: the web (WSGI and ASGI), a Celery worker or beat and
manage.py refuse to start without DJANGO_SETTINGS_MODULE, and say what to set (a worker used
to run the development settings silently: DEBUG, a console mailer marking emails sent)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from config.startup import MESSAGE

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent

COMMANDS = {
    "manage.py": [sys.executable, "manage.py", "check"],
    "worker": [str(BIN / "celery"), "-A", "config.celery_app", "worker", "--pool=solo"],
    "beat": [str(BIN / "celery"), "-A", "config.celery_app", "beat"],
    "wsgi": [sys.executable, "-c", "import config.wsgi"],
    "asgi": [sys.executable, "-c", "import config.asgi"],
}


def run(argv, **env):
    base = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    return subprocess.run(
        argv, cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=60,
        stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.mark.parametrize("process", list(COMMANDS))
def test_a_process_without_a_settings_module_refuses_to_start(process):
    result = run(COMMANDS[process])
    assert result.returncode != 0
    assert MESSAGE in result.stderr
    assert "config.settings.production" in result.stderr


def test_with_the_settings_named_it_starts():
    result = run(COMMANDS["manage.py"], DJANGO_SETTINGS_MODULE="config.settings.test")
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout
