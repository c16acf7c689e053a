"""Production settings keep database connections across requests and templates compiled in
memory (what bench/http_pages.py measures); the embedded SQLite default opens one per request."""

import json

from tests.test_deploy import PRODUCTION_ENV, run_manage

SHOW = (
    "import json; from django.conf import settings; from django.template import engines; "
    "database = settings.DATABASES['default']; "
    "loaders = [type(loader).__module__ for loader in engines['django'].engine.template_loaders]; "
    "print(json.dumps({'max_age': database['CONN_MAX_AGE'], "
    "'health_checks': database['CONN_HEALTH_CHECKS'], 'loaders': loaders}))"
)


def production_settings(**env) -> dict:
    result = run_manage("shell", "-c", SHOW, **{**PRODUCTION_ENV, **env})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_production_keeps_postgresql_connections_for_a_minute_with_health_checks():
    shown = production_settings()
    assert shown["max_age"] == 60
    assert shown["health_checks"] is True


def test_db_conn_max_age_sets_how_long_a_connection_is_kept():
    assert production_settings(DB_CONN_MAX_AGE="0")["max_age"] == 0
    assert production_settings(DB_CONN_MAX_AGE="300")["max_age"] == 300


def test_production_templates_are_compiled_once_per_process():
    assert production_settings()["loaders"] == ["django.template.loaders.cached"]


def test_the_embedded_sqlite_default_opens_a_connection_per_request(tmp_path):
    result = run_manage(
        "shell",
        "-c",
        SHOW,
        DJANGO_SETTINGS_MODULE="config.settings.dev",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        VAR_DIR=str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout.strip().splitlines()[-1])
    assert shown["max_age"] == 0
