"""The outbox handler: one delivery per endpoint of the event's account that subscribes to
its type (OUTBOX_HANDLERS names `webhook_fan_out`): enabled ones get it now; ones disabled
after failures get it paused (no next attempt) and are sent it when enabled again, as the
banner and the email promise; ones disabled by their owner get nothing."""

from django.utils import timezone

from outbox.models import OutboxEvent

from ..locks import lock_endpoints_receiving
from ..models import WebhookDelivery
from .queueing import deliveries_queue


def webhook_fan_out(event: OutboxEvent) -> list[int]:
    """Create the deliveries of this event (the caller, outbox_dispatch, holds the event's
    lock: once per event; the unique (endpoint, event) pair makes a repeat write nothing) and
    queue the first attempts of the enabled endpoints' after the commit. The pks of the
    deliveries created due now (the paused ones are not among them)."""
    endpoints = [
        endpoint
        # Locked (in pk order, as every writer locks one): an enable or disable in between
        # waits, so a delivery is never created paused after its endpoint's resume.
        for endpoint in lock_endpoints_receiving(owner_id=event.account_id)
        if endpoint.subscribes_to(event.event_type)
    ]
    if not endpoints:
        return []
    now = timezone.now()
    WebhookDelivery.objects.bulk_create(
        [
            WebhookDelivery(
                endpoint=endpoint, event=event, next_attempt_at=now if endpoint.enabled else None
            )
            for endpoint in endpoints
        ],
        ignore_conflicts=True,
    )
    created = list(
        WebhookDelivery.objects.filter(
            event=event, attempts=0, endpoint__in=[e for e in endpoints if e.enabled]
        )
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    deliveries_queue(created)
    return created
