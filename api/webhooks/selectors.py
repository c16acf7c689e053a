"""Reads of webhooks, always through the owner (another owner's id: DoesNotExist → 404)."""

from django.db.models import Count, Prefetch, QuerySet

from accounts.models import User
from outbox.models import OutboxEvent

from .models import WebhookAttempt, WebhookDelivery, WebhookEndpoint


def customer_endpoints(owner: User) -> QuerySet[WebhookEndpoint]:
    return WebhookEndpoint.objects.filter(owner=owner).order_by("-created_at", "-pk")


def customer_endpoint(owner: User, endpoint_id: int) -> WebhookEndpoint:
    return WebhookEndpoint.objects.get(owner=owner, pk=endpoint_id)


def endpoint_deliveries(endpoint: WebhookEndpoint) -> QuerySet[WebhookDelivery]:
    """The delivery log of one endpoint, newest first, with each delivery's attempts."""
    return (
        WebhookDelivery.objects.filter(endpoint=endpoint)
        .select_related("event")
        .prefetch_related(
            Prefetch("attempt_log", queryset=WebhookAttempt.objects.order_by("number"))
        )
        .order_by("-created_at", "-pk")
    )


def customer_deliveries(owner: User) -> QuerySet[WebhookDelivery]:
    return (
        WebhookDelivery.objects.filter(endpoint__owner=owner)
        .select_related("event")
        .prefetch_related(
            Prefetch("attempt_log", queryset=WebhookAttempt.objects.order_by("number"))
        )
    )


def endpoints_with_counts(owner: User) -> QuerySet[WebhookEndpoint]:
    return customer_endpoints(owner).annotate(delivery_count=Count("deliveries"))


def account_events(owner: User, *, event_type: str | None = None, since=None):
    """The account's events (the outbox's rows for it), newest first."""
    events = OutboxEvent.objects.filter(account=owner)
    if event_type is not None:
        events = events.filter(event_type=event_type)
    if since is not None:
        events = events.filter(created_at__gte=since)
    return events.order_by("-created_at", "-pk")
