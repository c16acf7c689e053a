"""Processes of the embedded default (`make run` without REDIS_URL) for tests: the commands come
from Procfile.dev, the environment is the developer's less every server URL, and the state lives
in a scratch VAR_DIR of the test's own."""

import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
# Variables that would switch the embedded default to servers (or to another settings module).
SERVER_VARIABLES = ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE")


def embedded_env(var_dir: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in SERVER_VARIABLES}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.dev",
        VAR_DIR=str(var_dir),
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        PYTHONUNBUFFERED="1",
        PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        **extra,
    )
    return env


def procfile_command(name: str) -> list[str]:
    """The command line of one process of Procfile.dev (what `make run` starts)."""
    for line in (ROOT / "Procfile.dev").read_text().splitlines():
        key, sep, command = line.partition(":")
        if sep and key.strip() == name:
            return shlex.split(command)
    raise LookupError(f"no {name!r} process in Procfile.dev")


def settings_value(env: dict[str, str], expression: str) -> str:
    """Evaluate `expression` (over `settings`) in a fresh interpreter with that environment:
    settings are read once per process, from the environment it started with."""
    code = f"from django.conf import settings; print({expression})"
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()
