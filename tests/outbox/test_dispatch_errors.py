"""A handler that raises for one event does not stop the outbox's re-dispatch of the others:
the event stays pending (tried again at the next beat) and is logged; the webhooks' sweep still
re-queues due deliveries."""

import logging
from datetime import timedelta

import pytest
from django.utils import timezone

from api.webhooks.models import DeliveryStatus, WebhookDelivery
from api.webhooks.services.sweep import webhooks_sweep
from outbox.models import OutboxEvent
from outbox.services import outbox_emit
from outbox.tasks import outbox_redispatch

pytestmark = pytest.mark.django_db


def test_one_failing_event_is_skipped_and_due_deliveries_are_still_queued(
    customer,
    receiver,
    endpoint_for,
    credit,
    settings,
    caplog,
    django_capture_on_commit_callbacks,
):
    endpoint = endpoint_for(customer, events=["balance.credited", "order.paid"])
    receiver.statuses = [500]
    with django_capture_on_commit_callbacks(execute=True):
        credit(customer, "3.00")
    failed = WebhookDelivery.objects.get(endpoint=endpoint)
    assert failed.status == DeliveryStatus.FAILED
    WebhookDelivery.objects.filter(pk=failed.pk).update(
        next_attempt_at=timezone.now() - timedelta(seconds=1)  # its retry is due
    )
    settings.OUTBOX_HANDLERS = [
        "tests.outbox.handlers.break_on_review",
        "api.webhooks.services.fanout.webhook_fan_out",
    ]
    # Two events whose dispatch task was lost (their commit callbacks never ran).
    broken = outbox_emit(event_type="payment.review", account=customer, payload={})
    fine = outbox_emit(event_type="order.paid", account=customer, payload={"order": 1})
    OutboxEvent.objects.filter(pk__in=[broken.pk, fine.pk]).update(
        created_at=timezone.now() - timedelta(minutes=5)
    )

    with (
        caplog.at_level(logging.ERROR, logger="outbox.services"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        dispatched = outbox_redispatch.delay().get()
        report = webhooks_sweep()

    assert dispatched == [fine.pk]
    assert failed.pk in report.queued
    broken.refresh_from_db()
    assert broken.dispatched_at is None  # tried again at the next sweep
    assert str(broken.event_id) in caplog.text
    failed.refresh_from_db()
    assert failed.status == DeliveryStatus.DELIVERED
    paid = WebhookDelivery.objects.get(endpoint=endpoint, event=fine)
    assert paid.status == DeliveryStatus.DELIVERED
    assert sorted(r.event["type"] for r in receiver.answered(200)) == [
        "balance.credited",
        "order.paid",
    ]
