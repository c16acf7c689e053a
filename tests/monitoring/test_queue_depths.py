"""What waits in each queue, read from the broker (the run's Redis): /metrics and /ops/health/
show the number of messages and the age of the oldest, and say when the broker does not
answer."""

import time

import pytest
from celery import Celery
from django.urls import reverse

from config.queues import QUEUES
from tests.celery_worker import broker_url_for, purge_broker

from .test_health_endpoints import DEAD_REDIS
from .test_metrics import TOKEN, samples, scrape
from .test_ops_health_page import field as cell
from .test_ops_health_page import row

pytestmark = pytest.mark.django_db
URL = reverse("monitoring:ops_health")


@pytest.fixture
def broker(settings):
    """The broker of the run's own Redis (a database of its own), empty."""
    url = broker_url_for(settings.REDIS_URL)
    purge_broker(url)
    settings.CELERY_BROKER_URL = url
    client = Celery("queue-depth-test", broker=url, set_as_current=False)
    try:
        yield client
    finally:
        client.close()
        purge_broker(url)


def publish(client: Celery, queue: str, *, age: float = 0.0) -> None:
    # Published as the application publishes (the same signal stamps published_at), or
    # stamped `age` seconds ago.
    from config.celery_app import app

    headers = {"published_at": time.time() - age} if age else {}
    app.send_task(
        "payments.tasks.scan_network", args=["local"], queue=queue, headers=headers,
        connection=client.connection_for_write(),
    )  # fmt: skip


def field(html: str, queue: str, name: str) -> str:
    return cell(row(html, "data-queue", queue), name)


def test_waiting_messages_and_the_oldest_age_per_queue(broker, operator_client, settings):
    settings.METRICS_ENABLED, settings.METRICS_TOKEN = True, TOKEN
    publish(broker, "payments", age=120)
    publish(broker, "payments")
    publish(broker, "webhooks")

    found = samples(scrape())
    depth = {q: found[("gpu_rental_queue_messages", (("queue", q),))] for q in QUEUES}
    assert depth == {"payments": 2, "hosts": 0, "webhooks": 1, "emails": 0, "celery": 0}
    oldest = found[("gpu_rental_queue_oldest_message_age_seconds", (("queue", "payments"),))]
    assert 119 <= oldest < 180
    assert found[("gpu_rental_queue_oldest_message_age_seconds", (("queue", "hosts"),))] == 0

    html = operator_client.get(URL).content.decode()
    assert field(html, "payments", "messages") == "2"
    assert 119 <= int(field(html, "payments", "oldest")) < 180
    assert field(html, "webhooks", "messages") == "1"
    assert field(html, "emails", "messages") == "0" and field(html, "emails", "oldest") == "—"


def test_a_broker_that_does_not_answer_is_said_and_hidden(operator_client, settings):
    settings.CELERY_BROKER_URL = DEAD_REDIS
    settings.METRICS_ENABLED, settings.METRICS_TOKEN = True, TOKEN
    found = samples(scrape())
    assert found[("gpu_rental_queue_messages", (("queue", "payments"),))] == -1
    html = operator_client.get(URL).content.decode()
    assert field(html, "payments", "messages") == "the broker did not answer"
    assert "s3cret" not in html and "8499" not in html


def test_tasks_not_yet_published_are_counted(operator_client, settings, customer):
    """Written in a transaction whose publishing did not happen yet (the commit's callbacks
    never run in this test): the outbox's backlog."""
    from outbox.messages import enqueue

    settings.METRICS_ENABLED, settings.METRICS_TOKEN = True, TOKEN
    enqueue("rental.tasks.order_email", 1, "ready")
    enqueue("rental.tasks.order_email", 2, "ready")
    found = samples(scrape())
    assert found[("gpu_rental_outbox_unpublished_messages", ())] == 2
    assert 0 <= found[("gpu_rental_outbox_oldest_unpublished_age_seconds", ())] < 60
    html = operator_client.get(URL).content.decode()
    assert field(html, "outbox", "messages") == "2"
