"""Row locks of webhooks, in one order: the endpoint(s), by pk, then their deliveries (each by
pk); under an outbox event's dispatch lock when fanning it out (see the house's lock order in
rental.locks)."""

from django.db.models import Q

from .models import DisabledReason, WebhookDelivery, WebhookEndpoint


def lock_endpoint(*, endpoint_id: int, owner_id: int | None = None) -> WebhookEndpoint | None:
    rows = WebhookEndpoint.objects.select_for_update(of=("self",), no_key=True).filter(
        pk=endpoint_id
    )
    if owner_id is not None:
        rows = rows.filter(owner_id=owner_id)
    return rows.first()


def lock_endpoints_receiving(*, owner_id: int) -> list[WebhookEndpoint]:
    """The owner's endpoints that receive events (enabled, or paused after failures: they
    get them later), locked in primary-key order."""
    return list(
        WebhookEndpoint.objects.select_for_update(of=("self",), no_key=True)
        .filter(owner_id=owner_id)
        .filter(Q(enabled=True) | Q(disabled_reason=DisabledReason.FAILURES))
        .order_by("pk")
    )


def lock_delivery(*, delivery_id: int) -> WebhookDelivery | None:
    """Call after the endpoint's lock when both are needed."""
    return (
        WebhookDelivery.objects.select_for_update(of=("self",), no_key=True)
        .select_related("event")
        .filter(pk=delivery_id)
        .first()
    )


def lock_deliveries(*, delivery_ids) -> list[WebhookDelivery]:
    """Several deliveries, in primary-key order (after their endpoint's lock)."""
    return list(
        WebhookDelivery.objects.select_for_update(of=("self",), no_key=True)
        .filter(pk__in=list(delivery_ids))
        .order_by("pk")
    )
