"""The outbox handler: one delivery per enabled endpoint of the event's account that
subscribes to its type (OUTBOX_HANDLERS names `webhook_fan_out`)."""

from django.db import transaction
from django.utils import timezone

from outbox.models import OutboxEvent

from ..models import WebhookDelivery, WebhookEndpoint


def webhook_fan_out(event: OutboxEvent) -> list[int]:
    """Create the deliveries of this event (the caller, outbox_dispatch, holds the event's
    lock: once per event; the unique (endpoint, event) pair makes a repeat write nothing) and
    queue their first attempts after the commit. The pks of the deliveries created."""
    from .. import tasks

    endpoints = [
        endpoint
        for endpoint in WebhookEndpoint.objects.filter(owner_id=event.account_id, enabled=True)
        if endpoint.subscribes_to(event.event_type)
    ]
    if not endpoints:
        return []
    now = timezone.now()
    WebhookDelivery.objects.bulk_create(
        [
            WebhookDelivery(endpoint=endpoint, event=event, next_attempt_at=now)
            for endpoint in endpoints
        ],
        ignore_conflicts=True,
    )
    created = list(
        WebhookDelivery.objects.filter(event=event, attempts=0, endpoint__in=endpoints)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    for delivery_id in created:
        transaction.on_commit(lambda pk=delivery_id: tasks.webhook_deliver.delay(pk))
    return created
