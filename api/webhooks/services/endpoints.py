"""An account's endpoints: create, change, enable or disable, delete; manual redelivery."""

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.locks import lock_user
from accounts.models import User
from outbox.events import SUBSCRIBABLE_EVENT_TYPES
from outbox.messages import enqueue

from .. import guard
from ..exceptions import AttemptInFlight, EndpointDisabled, InvalidEndpoint, TooManyEndpoints
from ..locks import lock_delivery, lock_endpoint
from ..models import DeliveryStatus, DisabledReason, WebhookDelivery, WebhookEndpoint
from .queueing import deliveries_queue
from .status import delivery_set_status

MAX_ENDPOINTS_PER_ACCOUNT = 10


def clean_events(events) -> list[str]:
    """The subscribed event types, in the catalogue's order; InvalidEndpoint otherwise."""
    if not isinstance(events, list | tuple) or not all(isinstance(e, str) for e in events):
        raise InvalidEndpoint(_("Choose the events from the list."), field="events")
    unknown = sorted(set(events) - set(SUBSCRIBABLE_EVENT_TYPES))
    if unknown:
        raise InvalidEndpoint(
            _("Unknown event: %(events)s.") % {"events": ", ".join(unknown)[:200]}, field="events"
        )
    if not events:
        raise InvalidEndpoint(_("Choose at least one event."), field="events")
    return [name for name in SUBSCRIBABLE_EVENT_TYPES if name in events]


def clean_url(url) -> str:
    """The URL as given, once the address guard accepts it (resolved now)."""
    try:
        guard.check(url)
    except guard.AddressRefused as refused:
        raise InvalidEndpoint(refused.message, field="url") from None
    return url


def endpoint_create(*, owner: User, url: str, events: list[str]) -> WebhookEndpoint:
    """A new enabled endpoint with a fresh secret (the caller shows it once)."""
    events = clean_events(events)
    url = clean_url(url)
    with transaction.atomic():
        lock_user(owner.pk)
        if WebhookEndpoint.objects.filter(owner=owner).count() >= MAX_ENDPOINTS_PER_ACCOUNT:
            raise TooManyEndpoints()
        return WebhookEndpoint.objects.create(owner=owner, url=url, events=events)


def endpoint_update(
    *, endpoint_id: int, owner: User, url: str | None = None, events: list[str] | None = None
) -> WebhookEndpoint:
    """Change the URL and/or events; WebhookEndpoint.DoesNotExist for another owner's."""
    events = clean_events(events) if events is not None else None
    url = clean_url(url) if url is not None else None
    with transaction.atomic():
        endpoint = lock_endpoint(endpoint_id=endpoint_id, owner_id=owner.pk)
        if endpoint is None:
            raise WebhookEndpoint.DoesNotExist()
        if url is not None:
            endpoint.url = url
        if events is not None:
            endpoint.events = events
        endpoint.save(update_fields=["url", "events", "updated_at"])
    return endpoint


def endpoint_set_enabled(*, endpoint_id: int, owner: User, enabled: bool) -> WebhookEndpoint:
    """Enable (the failure count starts again; paused deliveries resume now) or disable."""
    with transaction.atomic():
        endpoint = lock_endpoint(endpoint_id=endpoint_id, owner_id=owner.pk)
        if endpoint is None:
            raise WebhookEndpoint.DoesNotExist()
        if enabled and not endpoint.enabled:
            endpoint_enable(endpoint)
        elif not enabled and endpoint.enabled:
            endpoint_disable(endpoint, reason=DisabledReason.BY_OWNER)
    return endpoint


def endpoint_enable(endpoint: WebhookEndpoint) -> None:
    """The caller holds the endpoint's lock. Its open deliveries (paused at the disable, or
    created paused meanwhile by the fan-out) are due now and queued."""

    endpoint.enabled = True
    endpoint.disabled_reason = ""
    endpoint.disabled_at = None
    endpoint.disabled_notified_at = None
    endpoint.consecutive_failures = 0
    endpoint.save()
    now = timezone.now()
    paused = list(
        WebhookDelivery.objects.filter(
            endpoint=endpoint,
            status__in=(DeliveryStatus.PENDING, DeliveryStatus.FAILED),
        ).values_list("pk", flat=True)
    )
    WebhookDelivery.objects.filter(pk__in=paused).update(next_attempt_at=now)
    deliveries_queue(paused)


def endpoint_disable(endpoint: WebhookEndpoint, *, reason: str) -> None:
    """The caller holds the endpoint's lock. Open deliveries pause (next attempt unset) until
    the endpoint is enabled again; after failures the owner is emailed."""

    endpoint.enabled = False
    endpoint.disabled_reason = reason
    endpoint.disabled_at = timezone.now()
    endpoint.save()
    WebhookDelivery.objects.filter(
        endpoint=endpoint, status__in=(DeliveryStatus.PENDING, DeliveryStatus.FAILED)
    ).update(next_attempt_at=None)
    if reason == DisabledReason.FAILURES:
        enqueue("api.webhooks.tasks.webhook_disabled_email", endpoint.pk)


def endpoint_delete(*, endpoint_id: int, owner: User) -> None:
    with transaction.atomic():
        endpoint = lock_endpoint(endpoint_id=endpoint_id, owner_id=owner.pk)
        if endpoint is None:
            raise WebhookEndpoint.DoesNotExist()
        endpoint.delete()


def delivery_redeliver(*, delivery_id: int, owner: User) -> WebhookDelivery:
    """Send this delivery's event again now, whatever its status, with a fresh schedule of
    retries. Raises WebhookDelivery.DoesNotExist for another owner's, EndpointDisabled while
    its endpoint is disabled, AttemptInFlight while an attempt of it runs (its lease live):
    two POSTs of one delivery are never made at once."""

    endpoint_id = (
        WebhookDelivery.objects.filter(pk=delivery_id, endpoint__owner=owner)
        .values_list("endpoint_id", flat=True)
        .first()
    )
    if endpoint_id is None:
        raise WebhookDelivery.DoesNotExist()
    with transaction.atomic():
        endpoint = lock_endpoint(endpoint_id=endpoint_id, owner_id=owner.pk)
        delivery = lock_delivery(delivery_id=delivery_id) if endpoint else None
        if delivery is None or delivery.endpoint_id != endpoint.pk:
            raise WebhookDelivery.DoesNotExist()
        if not endpoint.enabled:
            raise EndpointDisabled()
        if delivery.attempt_in_flight():
            raise AttemptInFlight()
        delivery_set_status(
            delivery,
            to_status=DeliveryStatus.PENDING,
            fields={"round_attempts": 0, "next_attempt_at": timezone.now()},
        )
        deliveries_queue([delivery.pk])
    return delivery


def retry_schedule() -> tuple[int, ...]:
    return tuple(settings.WEBHOOK_RETRY_SCHEDULE_SECONDS)
