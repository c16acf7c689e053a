"""Sending events again to one endpoint: a test ping, and the replay of the account's events
since a time. Both go through the normal delivery path (a delivery row, its attempts in the
endpoint's log, the retry schedule), with each event's own id."""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from outbox import events
from outbox.models import OutboxEvent
from outbox.services import outbox_record

from ..exceptions import EndpointDisabled, ReplayOutOfBounds
from ..locks import lock_deliveries, lock_endpoint
from ..models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from .queueing import deliveries_queue
from .status import delivery_set_status


def _locked_endpoint(endpoint_id: int, owner: User) -> WebhookEndpoint:
    endpoint = lock_endpoint(endpoint_id=endpoint_id, owner_id=owner.pk)
    if endpoint is None:
        raise WebhookEndpoint.DoesNotExist()
    if not endpoint.enabled:
        raise EndpointDisabled(_("This endpoint is disabled: enable it first."))
    return endpoint


def endpoint_ping(*, endpoint_id: int, owner: User) -> WebhookDelivery:
    """A `webhook.ping` event, to this endpoint only (subscribed or not), queued now.
    WebhookEndpoint.DoesNotExist for another owner's; EndpointDisabled while disabled."""
    with transaction.atomic():
        endpoint = _locked_endpoint(endpoint_id, owner)
        event = outbox_record(
            event_type=events.WEBHOOK_PING,
            account=owner.pk,
            payload={"endpoint": {"id": endpoint.pk, "url": endpoint.url}},
        )
        delivery = WebhookDelivery.objects.create(
            endpoint=endpoint, event=event, next_attempt_at=timezone.now()
        )
        deliveries_queue([delivery.pk])
    return delivery


def replay_limits() -> tuple[timedelta, int]:
    return timedelta(days=settings.WEBHOOK_REPLAY_MAX_DAYS), settings.WEBHOOK_REPLAY_MAX_EVENTS


def endpoint_replay(
    *, endpoint_id: int, owner: User, since: datetime, now: datetime | None = None
) -> list[int]:
    """Queue again every event of the account since `since` whose type the endpoint
    subscribes to (same event ids; a delivery it already had starts a fresh round, one whose
    attempt is running now is left to it). The delivery pks queued, oldest event first.

    ReplayOutOfBounds when `since` is in the future, more than WEBHOOK_REPLAY_MAX_DAYS back,
    or holds more than WEBHOOK_REPLAY_MAX_EVENTS events (nothing queued: ask from later)."""
    now = now or timezone.now()
    reach, most = replay_limits()
    if since > now:
        raise ReplayOutOfBounds(_("“since” is in the future."))
    if since < now - reach:
        raise ReplayOutOfBounds(
            _("A replay reaches back at most %(days)d days.") % {"days": reach.days}
        )
    with transaction.atomic():
        endpoint = _locked_endpoint(endpoint_id, owner)
        found = list(
            OutboxEvent.objects.filter(
                account_id=owner.pk, created_at__gte=since, event_type__in=endpoint.events
            )
            .order_by("created_at", "pk")
            .values_list("pk", flat=True)[: most + 1]
        )
        if len(found) > most:
            raise ReplayOutOfBounds(
                _(
                    "More than %(most)d events since then: replay from a later time, "
                    "in several steps."
                )
                % {"most": most}
            )
        WebhookDelivery.objects.bulk_create(
            [WebhookDelivery(endpoint=endpoint, event_id=pk, next_attempt_at=now) for pk in found],
            ignore_conflicts=True,
        )
        deliveries = lock_deliveries(
            delivery_ids=WebhookDelivery.objects.filter(
                endpoint=endpoint, event_id__in=found
            ).values_list("pk", flat=True)
        )
        queued = []
        for delivery in deliveries:
            if delivery.attempt_in_flight(now):
                continue
            if delivery.attempts:  # sent before: a fresh round, as a manual redelivery
                delivery_set_status(
                    delivery,
                    to_status=DeliveryStatus.PENDING,
                    fields={"round_attempts": 0, "next_attempt_at": now},
                )
            queued.append(delivery)
        deliveries_queue([d.pk for d in queued])
    return [d.pk for d in queued]
