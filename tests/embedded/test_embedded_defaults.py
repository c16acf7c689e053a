"""Which broker and which site address the embedded default (`make run`) ends up with."""

import os
import re
import subprocess

from .stack import ROOT, embedded_env, settings_value


def test_without_servers_the_broker_is_a_sqlite_file_in_var_dir(tmp_path):
    env = embedded_env(tmp_path / "var")
    assert settings_value(env, "settings.CELERY_BROKER_URL") == (
        f"sqlite:///{tmp_path / 'var' / 'celery-broker.sqlite3'}"
    )
    assert settings_value(env, "settings.CELERY_BROKER_TRANSPORT") == (
        "config.embedded_broker:Transport"
    )


def test_redis_url_or_celery_broker_url_keeps_redis(tmp_path):
    env = embedded_env(tmp_path / "var", REDIS_URL="redis://127.0.0.1:6379/5")
    assert settings_value(env, "settings.CELERY_BROKER_URL") == "redis://127.0.0.1:6379/5"
    assert settings_value(env, "getattr(settings, 'CELERY_BROKER_TRANSPORT', None)") == "None"
    # A killed worker's messages go back to their queue just after the longest a task may run.
    assert (
        settings_value(
            env,
            "(settings.CELERY_BROKER_TRANSPORT_OPTIONS['visibility_timeout'],"
            " settings.CELERY_TASK_TIME_LIMIT)",
        )
        == "(360, 300)"
    )
    env = embedded_env(tmp_path / "var", CELERY_BROKER_URL="redis://127.0.0.1:6379/7")
    assert settings_value(env, "settings.CELERY_BROKER_URL") == "redis://127.0.0.1:6379/7"


def _honcho_line(**variables: str) -> str:
    """The command `make run` would start honcho with (make -n prints it, runs nothing)."""
    env = {k: v for k, v in os.environ.items() if k != "SITE_URL"} | variables
    result = subprocess.run(
        ["make", "--no-print-directory", "-n", "run", "PORT=8123"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return re.search(r"^HOST=.*SITE_URL=\S+", result.stdout, re.MULTILINE).group(0)


def test_make_run_links_emails_to_the_port_it_serves_on():
    # honcho gives the worker and beat PORT values of their own: SITE_URL is set for all.
    assert 'PORT=8123 ANVIL_PORT=8545 SITE_URL="http://127.0.0.1:8123"' in _honcho_line()
    assert 'SITE_URL="https://gpu.example.com"' in _honcho_line(SITE_URL="https://gpu.example.com")


def test_make_runs_watcher_looks_more_often_than_its_chain_mines(tmp_path):
    """A transfer must be found while it is still confirming: the watcher's scans come more
    often than make run's blocks (it looked every 5 s at a chain mining every 2 s)."""
    env = embedded_env(tmp_path / "var")
    scan_every = float(
        settings_value(env, 'settings.CELERY_BEAT_SCHEDULE["scan-networks"]["schedule"]')
    )
    block_time = float(settings_value(env, "settings.LOCAL_CHAIN_BLOCK_TIME_SECONDS"))
    assert block_time == 2.0  # scripts/local-chain's default
    assert scan_every == float(settings_value(env, "settings.PAYMENT_SCAN_INTERVAL_SECONDS")) == 1.0
    assert scan_every < block_time
