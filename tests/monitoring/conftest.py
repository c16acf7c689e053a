"""Operators, and a real Celery worker on a broker database of its own (no chain needed)."""

import os
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.db import connection

from tests.celery_worker import WorkerHarness, broker_url_for, database_url_of, purge_broker


@pytest.fixture
def workers(transactional_db, tmp_path) -> Iterator[WorkerHarness]:
    """Real Celery workers on the test database, consuming a queue of the test's own."""
    broker_url = broker_url_for(settings.REDIS_URL)
    purge_broker(broker_url)
    base_env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "TEST_CELERY_WORKER": "1",
        "DATABASE_URL": database_url_of(connection.settings_dict),
        "CELERY_BROKER_URL": broker_url,
        "PYTHONUNBUFFERED": "1",
    }
    if settings.REDIS_URL:
        base_env["REDIS_URL"] = settings.REDIS_URL
    harness = WorkerHarness(broker_url=broker_url, base_env=base_env, log_dir=tmp_path)
    try:
        yield harness
    finally:
        harness.close()
        print(harness.logs())
