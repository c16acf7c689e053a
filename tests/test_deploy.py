"""Production settings: secrets required, `check --deploy` clean."""

import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings

BASE = Path(settings.BASE_DIR)


def run_manage(*args, **env_overrides):
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(
            ("DJANGO_", "SECRET_KEY", "DATABASE_URL", "REDIS_URL", "EMAIL_", "PAYMENT_")
        )
    }
    env.update({"DJANGO_SETTINGS_MODULE": "config.settings.production", **env_overrides})
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=BASE,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


PRODUCTION_ENV = {
    "SECRET_KEY": "x" * 30 + "production-secret-with-enough-entropy-0123456789",
    "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/gpu_rental",
    "REDIS_URL": "redis://127.0.0.1:6379/9",
    "ALLOWED_HOSTS": "gpu.example.com",
    "EMAIL_HOST": "smtp.example.com",
    # Any account xpub but the test-only default (this one: account 2 of the anvil mnemonic).
    "PAYMENT_XPUB": "xpub6Ce9NcJvTk374xmC966FRY8NvVzjBr7FGiEf1h8mWkSwvCkvZ7PsCWEJS3nM"
    "sKLtRwsuEWY6indWjZFCB7yTqMpAoU7Z8c8TEkanQrsMF6j",
}


def test_check_deploy_is_clean_with_production_settings():
    result = run_manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION_ENV)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "SECRET_KEY"}
    result = run_manage("check", **env)
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_production_refuses_to_start_without_a_database_url():
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "DATABASE_URL"}
    result = run_manage("check", **env)
    assert result.returncode != 0
    assert "DATABASE_URL must be set" in result.stderr


def test_production_refuses_the_test_only_xpub():
    env = {k: v for k, v in PRODUCTION_ENV.items() if k != "PAYMENT_XPUB"}
    result = run_manage("check", **env)
    assert result.returncode != 0
    assert "PAYMENT_XPUB is the test-only xpub" in result.stderr


def test_every_variable_read_by_the_settings_is_documented_in_env_example():
    import re

    documented = set(
        re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", (BASE / ".env.example").read_text(), re.M)
    )
    read = set()
    for path in (BASE / "config" / "settings").glob("*.py"):
        read |= set(re.findall(r'env(?:_bool|_list)?\("([A-Z0-9_]+)"', path.read_text()))
        read |= set(re.findall(r'os\.environ\.setdefault\("([A-Z0-9_]+)"', path.read_text()))
    read -= {"DJANGO_SETTINGS_MODULE"}
    assert read - documented == set()
