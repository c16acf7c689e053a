"""The outbox re-dispatches itself: its own beat task (outbox.tasks.outbox_redispatch, on the
beat schedule) hands a committed event whose dispatch was lost to its handlers; the webhooks'
sweep, above it, no longer does (the bottom of the house is not driven from its top)."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from api.webhooks.models import DeliveryStatus, WebhookDelivery
from api.webhooks.services.sweep import webhooks_sweep
from config.celery_app import app
from outbox.models import OutboxEvent
from outbox.services import outbox_emit
from outbox.tasks import outbox_redispatch

pytestmark = pytest.mark.django_db


def _left_undispatched(customer) -> OutboxEvent:
    """An event committed with its change whose dispatch task never ran (the commit callback
    is not executed here: a lost broker message), old enough for the re-dispatch."""
    event = outbox_emit(event_type="order.paid", account=customer, payload={"order": 1})
    OutboxEvent.objects.filter(pk=event.pk).update(
        created_at=timezone.now() - timedelta(minutes=5)
    )
    return event


def test_the_beat_runs_the_outbox_redispatch_every_minute():
    entry = next(
        e for e in settings.CELERY_BEAT_SCHEDULE.values()
        if e["task"] == "outbox.tasks.outbox_redispatch"
    )
    assert entry["schedule"] == 60.0
    assert app.tasks[entry["task"]].name == outbox_redispatch.name  # registered under that name


def test_the_outbox_beat_task_redispatches_an_event_left_undispatched(
    customer, receiver, endpoint_for, django_capture_on_commit_callbacks
):
    endpoint = endpoint_for(customer, events=["order.paid"])
    event = _left_undispatched(customer)

    with django_capture_on_commit_callbacks(execute=True):
        webhooks_sweep()  # the webhooks' sweep leaves the outbox alone
    event.refresh_from_db()
    assert event.dispatched_at is None
    assert not WebhookDelivery.objects.filter(event=event).exists()

    with django_capture_on_commit_callbacks(execute=True):
        assert outbox_redispatch.delay().get() == [event.pk]

    event.refresh_from_db()
    assert event.dispatched_at is not None
    delivery = WebhookDelivery.objects.get(endpoint=endpoint, event=event)
    assert delivery.status == DeliveryStatus.DELIVERED
    assert [r.event["type"] for r in receiver.answered(200)] == ["order.paid"]
    # A second beat finds nothing left to dispatch.
    assert outbox_redispatch.delay().get() == []
