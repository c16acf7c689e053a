"""The events of one commit leave in ONE broker message, whatever their number and the number of
calls that wrote them; none is lost when part of the transaction rolls back to a savepoint. And
kombu publishes through one redis-py client, not a new one per message.

Counted at the broker: the real Redis queue the outbox's dispatch goes to (config/queues.py),
Celery publishing for real (not eagerly), as in the worker that scans the chain."""

import json

import pytest
import redis
from django.conf import settings
from django.db import transaction

from outbox import events
from outbox.models import OutboxEvent, OutboxMessage
from outbox.services import outbox_dispatch_batch, outbox_emit, outbox_emit_many
from tests.celery_worker import broker_url_for, purge_broker
from tests.outbox.test_messages import broker

pytestmark = pytest.mark.django_db(transaction=True)

QUEUE = "celery"  # the outbox's dispatch: config/queues.py


@pytest.fixture
def live_broker():
    url = broker_url_for(settings.REDIS_URL)
    purge_broker(url)
    client = redis.Redis.from_url(url)
    try:
        with broker(url):
            yield client
    finally:
        purge_broker(url)
        client.close()


def queued_tasks(client) -> list[tuple[str, list]]:
    """(task name, arguments) of each message waiting in the queue, oldest first."""
    found = []
    for raw in reversed(client.lrange(QUEUE, 0, -1)):
        message = json.loads(raw)
        body = message["body"]
        if message.get("properties", {}).get("body_encoding") == "base64":
            import base64

            body = base64.b64decode(body)
        args, _kwargs, _embed = json.loads(body)
        found.append((message["headers"]["task"], args))
    return found


def test_n_events_of_one_commit_are_published_once_and_all_dispatched(customer, live_broker):
    with transaction.atomic():
        for number in range(30):
            outbox_emit(event_type=events.ORDER_PAID, account=customer, payload={"n": number})
            # Another commit callback between two events (a log line, as the status setters
            # register): the events still share the one dispatch.
            transaction.on_commit(lambda: None)
        outbox_emit_many(
            [(events.BALANCE_CREDITED, customer.pk, {"n": number}) for number in range(30, 50)]
        )
        assert live_broker.llen(QUEUE) == 0  # nothing before the commit

    tasks = queued_tasks(live_broker)
    assert [name for name, _ in tasks] == ["outbox.tasks.outbox_dispatch_batch"]
    assert OutboxEvent.objects.count() == 50
    # Each event as it was given (the many in one statement): its own id, account and payload.
    assert OutboxEvent.objects.values("event_id").distinct().count() == 50
    assert set(OutboxEvent.objects.values_list("account_id", flat=True)) == {customer.pk}
    credited = OutboxEvent.objects.filter(event_type=events.BALANCE_CREDITED).order_by("pk")
    assert [event.payload for event in credited] == [{"n": n} for n in range(30, 50)]
    assert OutboxMessage.objects.filter(published_at__isnull=False).count() == 1

    (batch,) = tasks[0][1]
    assert len(outbox_dispatch_batch(batch=batch)) == 50  # what the worker does with it
    assert not OutboxEvent.objects.filter(dispatched_at__isnull=True).exists()


def test_a_rollback_to_a_savepoint_loses_no_event_of_the_commit(customer, live_broker):
    with transaction.atomic():
        kept = outbox_emit(event_type=events.ORDER_PAID, account=customer, payload={})
        try:
            with transaction.atomic():
                outbox_emit(event_type=events.ORDER_ACTIVE, account=customer, payload={})
                raise RuntimeError("the savepoint's work fails")
        except RuntimeError:
            pass
        after = outbox_emit(event_type=events.ORDER_ENDED, account=customer, payload={})

    assert set(OutboxEvent.objects.values_list("pk", flat=True)) == {kept.pk, after.pk}
    dispatched = []
    for name, (batch,) in queued_tasks(live_broker):
        assert name == "outbox.tasks.outbox_dispatch_batch"
        dispatched += outbox_dispatch_batch(batch=batch)
    assert sorted(dispatched) == sorted([kept.pk, after.pk])


def test_two_commits_publish_two_dispatches(customer, live_broker):
    for _ in range(2):
        with transaction.atomic():
            outbox_emit(event_type=events.ORDER_PAID, account=customer, payload={})
            outbox_emit(event_type=events.ORDER_ACTIVE, account=customer, payload={})
    batches = [args[0] for _name, args in queued_tasks(live_broker)]
    assert len(batches) == 2 and batches[0] != batches[1]
    assert [len(outbox_dispatch_batch(batch=batch)) for batch in batches] == [2, 2]


def test_publishing_reuses_one_redis_client_and_connection(customer, live_broker, monkeypatch):
    from config.celery_app import app

    built = []
    original = redis.Redis.__init__

    def counting_init(self, *args, **kwargs):
        built.append(self)
        original(self, *args, **kwargs)

    app.send_task("rental.tasks.order_email", args=[0, "ready"], retry=False)  # warm the pool
    connections_before = len(live_broker.client_list())
    monkeypatch.setattr(redis.Redis, "__init__", counting_init)
    for number in range(200):
        app.send_task("rental.tasks.order_email", args=[number, "ready"], retry=False)
    monkeypatch.undo()

    assert live_broker.llen("emails") == 201
    assert built == []  # kombu built a new client for each of them before config/kombu_redis
    assert len(live_broker.client_list()) == connections_before
