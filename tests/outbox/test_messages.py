"""Tasks leave through the outbox (outbox/messages.py). With the broker down, a customer paying
from the balance gets the page of a paid order, not a 500, and the payment email's task waits in
the outbox; once the broker is back the relay publishes it, once, and a real worker sends it.

Seen before: a 500 on a balance payment that had committed, and two emails never sent."""

import os
from contextlib import contextmanager

import pytest
import redis
from django.conf import settings
from django.db import connection
from django.urls import reverse
from kombu import pools as kombu_pools

from config.celery_app import app
from outbox.messages import enqueue, publish, publish_pending
from outbox.models import OutboxMessage
from rental.models import OrderEmail, OrderEmailKind, OrderStatus
from tests.celery_worker import (
    CeleryWorker,
    broker_url_for,
    database_url_of,
    purge_broker,
)
from tests.payments.worker.conftest import wait_until

DEAD_BROKER = "redis://127.0.0.1:8499/0"  # nothing listens there (the tests' reserved range)


@contextmanager
def broker(url: str):
    """This process publishes to `url` through the broker for real (not eagerly), as a web
    process does; the app's settings and connection pool are put back afterwards."""
    saved = app.conf.broker_url, app.conf.task_always_eager
    _drop_connections()
    app.conf.broker_url, app.conf.task_always_eager = url, False
    try:
        yield
    finally:
        _drop_connections()
        app.conf.broker_url, app.conf.task_always_eager = saved


def _drop_connections() -> None:
    """Celery keeps its broker connections and producers in kombu's pools: start new ones."""
    kombu_pools.reset()
    app._pool = None
    app.amqp._producer_pool = None


class OneWorker:
    """A real worker consuming the application's own `emails` queue, on the test database."""

    def __init__(self, broker_url: str, log_dir):
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "TEST_CELERY_WORKER": "1",
            "DATABASE_URL": database_url_of(connection.settings_dict),
            "CELERY_BROKER_URL": broker_url,
            "PYTHONUNBUFFERED": "1",
        }
        if settings.REDIS_URL:
            env["REDIS_URL"] = settings.REDIS_URL
        self.worker = CeleryWorker(env=env, queues=["emails"], log_path=log_dir / "worker.log")

    def task_errors(self) -> list[str]:
        return [line for line in self.worker.log().splitlines() if "raised unexpected" in line]

    def logs(self) -> str:
        return self.worker.log()


@pytest.mark.django_db(transaction=True)
def test_a_payment_with_the_broker_down_is_paid_and_its_email_sent_once_it_is_back(
    customer, customer_client, credit, catalogue, place_order, tmp_path
):
    credit(customer, "1000.00")
    order = place_order(customer, catalogue["h100"], lots=1, duration_days=3)
    url = reverse("payments:pay_with_balance", kwargs={"order_id": order.pk})

    with broker(DEAD_BROKER):
        response = customer_client.post(url)

    assert response.status_code == 302  # to the order's page: the payment committed
    order.refresh_from_db()
    assert order.status in (OrderStatus.PAID, OrderStatus.PROVISIONING)
    waiting = OutboxMessage.objects.get(task="rental.tasks.order_email")
    assert waiting.args == [order.pk, OrderEmailKind.PAYMENT_RECEIVED]
    assert waiting.published_at is None and waiting.attempts == 1
    assert "Connection refused" in waiting.last_error or "Error 111" in waiting.last_error
    assert not OrderEmail.objects.filter(order=order).exists()

    live = broker_url_for(settings.REDIS_URL)
    purge_broker(live)
    with broker(live):
        relayed = publish_pending()
        assert waiting.pk in relayed
        assert publish_pending() == []  # published once, never twice
    waiting.refresh_from_db()
    assert waiting.published_at is not None
    assert redis.Redis.from_url(live).llen("emails") == 1

    handle = OneWorker(live, tmp_path)
    handle.worker.start()
    try:
        wait_until(
            lambda: OrderEmail.objects.filter(
                order=order, kind=OrderEmailKind.PAYMENT_RECEIVED
            ).exists(),
            what="the payment email sent by the worker",
            harness=handle,
        )
    finally:
        handle.worker.stop()
        purge_broker(live)


@pytest.mark.django_db(transaction=True)
def test_a_published_or_claimed_message_is_not_published_again(customer):
    live = broker_url_for(settings.REDIS_URL)
    purge_broker(live)
    with broker(live):
        message = enqueue("rental.tasks.order_email", 10**9, OrderEmailKind.READY)
        message.refresh_from_db()
        assert message.published_at is not None  # after the commit (autocommit: at once)
        assert publish([message.pk]) == []
        assert publish_pending() == []
        later = enqueue("rental.tasks.order_email", 10**9 + 1, OrderEmailKind.READY, countdown=30)
    later.refresh_from_db()
    assert later.eta is not None and later.published_at is not None
    client = redis.Redis.from_url(live)
    # One message each on the emails' queue or held back for its ETA: never a second copy.
    assert client.llen("emails") == 2
    purge_broker(live)
