import os
import time
from collections.abc import Iterator
from decimal import Decimal

import pytest
from django.conf import settings
from django.db import connection

from payments.crypto.services.payments import payment_create_top_up
from payments.models import CryptoPayment
from tests.celery_worker import (
    WorkerHarness,
    broker_url_for,
    database_url_of,
    pg_connect,
    purge_broker,
)

WAIT_SECONDS = 60


@pytest.fixture
def workers(transactional_db, chain, tmp_path) -> Iterator[WorkerHarness]:
    """Real Celery workers on a Redis broker database of their own (emptied first), on the test
    database and the test's chain. Stopped at teardown, before the database is flushed and the
    chain reverted; their logs are printed then (pytest shows them when the test failed)."""
    broker_url = broker_url_for(settings.REDIS_URL)
    purge_broker(broker_url)
    base_env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "TEST_CELERY_WORKER": "1",
        "DATABASE_URL": database_url_of(connection.settings_dict),  # the test database
        "CELERY_BROKER_URL": broker_url,
        "TEST_CELERY_WORKER_RPC_URL_LOCAL": chain.rpc_url,
        "TEST_CELERY_WORKER_LOCAL_TOKEN_ADDRESS": chain.token_address,
        "PYTHONUNBUFFERED": "1",
    }
    if settings.REDIS_URL:
        base_env["REDIS_URL"] = settings.REDIS_URL  # the same cache as the test
    harness = WorkerHarness(broker_url=broker_url, base_env=base_env, log_dir=tmp_path)
    try:
        yield harness
    finally:
        harness.close()
        _end_backends_of(harness)
        print(harness.logs())


def _end_backends_of(harness: WorkerHarness) -> None:
    """A killed worker's backend can outlive it (waiting on a lock it will never use): end
    those of this test's workers, so the database's flush does not wait on them."""
    names = [worker.application_name for worker in harness.workers]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE application_name = ANY(%s) AND pid <> pg_backend_pid()",
            [names],
        )


@pytest.fixture
def side_connection() -> Iterator:
    """Opens psycopg connections of the test's own to the test database (not autocommit);
    all rolled back and closed at teardown."""
    opened = []

    def open_(name: str = "worker-test-side"):
        conn = pg_connect(connection.settings_dict, name)
        opened.append(conn)
        return conn

    try:
        yield open_
    finally:
        for conn in opened:
            conn.rollback()
            conn.close()


@pytest.fixture
def top_up(customer, chain) -> CryptoPayment:
    """A 50.00 tUSDC top-up of the customer's balance on the local chain (committed)."""
    return payment_create_top_up(
        customer=customer, amount_usd=Decimal("50.00"), network_key="local", asset_symbol="tUSDC"
    )


def pay_and_confirm_on_chain(chain, payment: CryptoPayment) -> None:
    """Send the amount due to the deposit address and mine the blocks its confirmations need
    (the watcher reads one block behind the head)."""
    chain.transfer(payment.deposit_address.address, int(payment.amount_due_units))
    chain.mine(payment.confirmations_required)


def wait_until(check, *, what: str, harness: WorkerHarness, timeout: float = WAIT_SECONDS):
    """Poll `check()` until it returns something truthy; fail with the workers' logs."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if harness.task_errors():  # no use waiting on: say why
            raise AssertionError(
                f"{what}: a task failed in the worker; workers' logs:\n{harness.logs()[-8000:]}"
            )
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{what}: not after {timeout:.0f} s (last: {value!r}); workers' logs:\n"
                f"{harness.logs()[-8000:]}"
            )
        time.sleep(0.2)
