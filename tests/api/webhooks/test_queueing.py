"""What the webhooks' queue holds: a delivery whose message waits on the broker is not queued
again by the minute sweep (seen: 451 deliveries queued twice behind slow receivers), one whose
message must have been lost is; a receiver holds at most its share of webhook workers; a retry
later than the broker may hold a message is left to the sweep."""

import threading
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from api.webhooks.models import DeliveryStatus, WebhookDelivery
from api.webhooks.services.delivery import delivery_attempt
from api.webhooks.services.sweep import webhooks_sweep
from outbox import events
from outbox.models import OutboxEvent
from outbox.services import outbox_dispatch


@pytest.fixture
def queued_delivery(customer, credit, endpoint_for, django_capture_on_commit_callbacks):
    """A balance.credited delivery fanned out and queued, its message not taken yet (the
    commit's callbacks, which publish it, are held back: as if it waited on the broker)."""

    def make(path: str = "/hook") -> WebhookDelivery:
        endpoint_for(customer, path=path, events=[events.BALANCE_CREDITED])
        with django_capture_on_commit_callbacks(execute=False):
            credit(customer, "25.00")
        event = OutboxEvent.objects.filter(account=customer).latest("pk")
        with django_capture_on_commit_callbacks(execute=False) as published:
            outbox_dispatch(event_pk=event.pk)
        assert len(published) == 1  # the first attempt's message
        return WebhookDelivery.objects.get(event=event)

    return make


def test_the_sweep_leaves_a_waiting_message_alone_and_queues_a_lost_one(
    queued_delivery, receiver
):
    delivery = queued_delivery()
    assert delivery.queued_at is not None and delivery.attempts == 0

    now = timezone.now()
    assert webhooks_sweep(now=now + timedelta(minutes=1)).queued == []
    assert webhooks_sweep(now=now + timedelta(minutes=10)).queued == []
    lost = timedelta(seconds=settings.WEBHOOK_QUEUED_MESSAGE_LOST_AFTER_SECONDS + 1)
    assert webhooks_sweep(now=delivery.queued_at + lost).queued == [delivery.pk]

    delivery_attempt(delivery_id=delivery.pk)  # the message is taken and the POST made
    delivery.refresh_from_db()
    assert (delivery.status, delivery.queued_at) == (DeliveryStatus.DELIVERED, None)
    assert len(receiver.received) == 1


def test_a_retry_later_than_the_broker_may_hold_a_message_is_left_to_the_sweep(
    queued_delivery, receiver, django_capture_on_commit_callbacks
):
    schedule = settings.WEBHOOK_RETRY_SCHEDULE_SECONDS
    assert schedule[0] <= settings.CELERY_MAX_COUNTDOWN_SECONDS < schedule[-1]
    delivery = queued_delivery()
    receiver.statuses = [500, 500, 500]

    with django_capture_on_commit_callbacks(execute=False) as published:
        delivery_attempt(delivery_id=delivery.pk)  # failed: the 10 s retry, with its ETA
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert delivery.queued_at is not None and len(published) == 2  # the ETA message, the log

    later = delivery.next_attempt_at + timedelta(seconds=1)
    with django_capture_on_commit_callbacks(execute=False) as published:
        delivery_attempt(delivery_id=delivery.pk, now=later)  # failed: the 60 s retry
    delivery.refresh_from_db()
    assert delivery.queued_at is not None

    later = delivery.next_attempt_at + timedelta(seconds=1)
    with django_capture_on_commit_callbacks(execute=False) as published:
        delivery_attempt(delivery_id=delivery.pk, now=later)  # failed: next in 600 s
    delivery.refresh_from_db()
    gap = delivery.next_attempt_at - delivery.last_attempt_at
    assert gap > timedelta(seconds=settings.CELERY_MAX_COUNTDOWN_SECONDS)
    assert delivery.queued_at is None and len(published) == 1  # the log line only
    assert webhooks_sweep(now=delivery.next_attempt_at - timedelta(seconds=1)).queued == []
    assert webhooks_sweep(now=delivery.next_attempt_at).queued == [delivery.pk]


@pytest.mark.django_db(transaction=True)
def test_an_endpoint_at_its_limit_of_attempts_at_once_gets_no_more_until_one_ends(
    customer, credit, endpoint_for, receiver, settings
):
    settings.WEBHOOK_MAX_ATTEMPTS_IN_FLIGHT_PER_ENDPOINT = 1
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    receiver.statuses = [500, 500]  # both first attempts fail: two deliveries waiting to retry
    credit(customer, "25.00")
    credit(customer, "30.00")
    first, second = WebhookDelivery.objects.filter(endpoint=endpoint).order_by("pk")
    assert (first.status, second.status) == (DeliveryStatus.FAILED, DeliveryStatus.FAILED)
    WebhookDelivery.objects.filter(endpoint=endpoint).update(next_attempt_at=timezone.now())
    receiver.hold = threading.Event()  # the receiver answers only once released
    receiver.arrived.clear()

    def attempt_first():
        try:
            delivery_attempt(delivery_id=first.pk)
        finally:
            connection.close()

    running = threading.Thread(target=attempt_first)
    running.start()
    try:
        assert receiver.arrived.wait(timeout=30)  # the first attempt is in flight
        assert delivery_attempt(delivery_id=second.pk) is None  # not now
        second.refresh_from_db()
        assert second.attempts == 1 and second.status == DeliveryStatus.FAILED
        assert len(receiver.received) == 2  # the two first attempts; one request waiting
    finally:
        receiver.hold.set()
        running.join(timeout=30)

    assert delivery_attempt(delivery_id=second.pk) == DeliveryStatus.DELIVERED
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, second.status) == ("delivered", "delivered")
    assert (first.attempt_started_at, second.attempt_started_at) == (None, None)
    assert [r.status for r in receiver.received] == [500, 500, 200, 200]
