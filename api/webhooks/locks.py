"""Row locks of webhooks, in one order: the endpoint, then its deliveries (each by pk)."""

from .models import WebhookDelivery, WebhookEndpoint


def lock_endpoint(*, endpoint_id: int, owner_id: int | None = None) -> WebhookEndpoint | None:
    rows = WebhookEndpoint.objects.select_for_update(of=("self",)).filter(pk=endpoint_id)
    if owner_id is not None:
        rows = rows.filter(owner_id=owner_id)
    return rows.first()


def lock_delivery(*, delivery_id: int) -> WebhookDelivery | None:
    """Call after the endpoint's lock when both are needed."""
    return (
        WebhookDelivery.objects.select_for_update(of=("self",))
        .select_related("event")
        .filter(pk=delivery_id)
        .first()
    )
