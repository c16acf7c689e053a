"""Delivering one event to one endpoint: claim, POST (no lock held), record.

The schedule: the first attempt right after the fan-out, then one redelivery after each of
WEBHOOK_RETRY_SCHEDULE_SECONDS (10 s, 1 min, then 6 × 10 min); when the last one fails too the
delivery has given up. WEBHOOK_DISABLE_AFTER_GAVE_UP deliveries given up in a row (no
delivered event between them) disable the endpoint, and the owner is emailed.

An attempt (DNS, connect, request, answer) is over by WEBHOOK_ATTEMPT_DEADLINE_SECONDS.
A claim sets `next_attempt_at` to a lease (`attempt_lease()`: the deadline plus LEASE_SLACK),
so nothing sends the delivery again while its attempt can still be running: the sweep waits
for the lease, a manual redelivery is refused (AttemptInFlight) until the attempt is
recorded. A worker killed during the POST leaves the delivery due again once the lease
passes, and the minute sweep sends it then, with the same event id. So every event is
delivered at least once; receivers deduplicate by `webhook-id`.

The clock: the task runs on the real clock (a message that waited in a backlog claims, signs
and schedules with the time it runs at); tests pass `now=` to `delivery_attempt` to drive
the schedule, and the signature's timestamp is always the real time.
"""

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .. import guard, signing
from ..locks import lock_delivery, lock_endpoint
from ..models import (
    OPEN_STATUSES,
    DeliveryStatus,
    DisabledReason,
    WebhookAttempt,
    WebhookDelivery,
)
from .endpoints import endpoint_disable, retry_schedule
from .http import PostResult, attempt_deadline, deadline_error, post
from .queueing import deliveries_queue
from .status import delivery_set_status

logger = logging.getLogger(__name__)

# How much longer than the attempt's deadline its lease runs (the recording, a slow database).
LEASE_SLACK = timedelta(seconds=30)
# A task queued for a moment runs a little early or late; this much early still counts.
CLOCK_SLACK = timedelta(seconds=1)


@dataclass(frozen=True, slots=True)
class Claim:
    delivery_id: int
    number: int
    url: str
    signing_secrets: tuple[str, ...]
    event_id: str
    body: bytes


def _claim(delivery_id: int, now: datetime) -> Claim | None:
    with transaction.atomic():
        endpoint_id = (
            WebhookDelivery.objects.filter(pk=delivery_id)
            .values_list("endpoint_id", flat=True)
            .first()
        )
        endpoint = lock_endpoint(endpoint_id=endpoint_id) if endpoint_id else None
        delivery = lock_delivery(delivery_id=delivery_id) if endpoint else None
        if delivery is not None and delivery.queued_at is not None:
            # A message of it is taken (this one; an early or a repeated one too): the sweep
            # may queue it again once it is due.
            delivery.queued_at = None
            delivery.save(update_fields=["queued_at"])
        if (
            delivery is None
            or not endpoint.enabled
            or delivery.status not in OPEN_STATUSES
            or delivery.next_attempt_at is None
            or delivery.next_attempt_at > now + CLOCK_SLACK
        ):
            return None
        if _in_flight(endpoint.pk, now, but=delivery.pk) >= (
            settings.WEBHOOK_MAX_ATTEMPTS_IN_FLIGHT_PER_ENDPOINT
        ):
            # That receiver already holds its share of the webhook workers: the sweep
            # queues this delivery again within a minute.
            logger.info(
                "webhook delivery %s: endpoint %s at its limit of attempts at once; later",
                delivery.pk,
                endpoint.pk,
                extra={"event": "webhook_endpoint_busy", "endpoint": endpoint.pk},
            )
            return None
        delivery.attempts += 1
        delivery.round_attempts += 1
        delivery.last_attempt_at = now
        delivery.next_attempt_at = now + attempt_lease()
        delivery.attempt_started_at = now
        delivery.save(
            update_fields=[
                "attempts",
                "round_attempts",
                "last_attempt_at",
                "next_attempt_at",
                "attempt_started_at",
            ]
        )
        return Claim(
            delivery_id=delivery.pk,
            number=delivery.attempts,
            url=endpoint.url,
            signing_secrets=tuple(endpoint.signing_secrets(timezone.now())),
            event_id=str(delivery.event.event_id),
            body=signing.body_of(delivery.event.envelope()),
        )


def _in_flight(endpoint_id: int, now: datetime, *, but: int) -> int:
    """Attempts to this endpoint running now (claimed within their lease, not recorded)."""
    return (
        WebhookDelivery.objects.filter(
            endpoint_id=endpoint_id,
            status__in=OPEN_STATUSES,
            attempt_started_at__gt=now - attempt_lease(),
        )
        .exclude(pk=but)
        .count()
    )


def attempt_lease() -> timedelta:
    return timedelta(seconds=float(settings.WEBHOOK_ATTEMPT_DEADLINE_SECONDS)) + LEASE_SLACK


def _send(claim: Claim) -> PostResult:
    started = time.monotonic()
    deadline = attempt_deadline(started)
    try:
        target = guard.check(claim.url, timeout=deadline - time.monotonic())
    except guard.AddressRefused as refused:
        return PostResult(
            None, str(refused.message)[:500], int((time.monotonic() - started) * 1000)
        )
    if time.monotonic() >= deadline:
        return PostResult(None, deadline_error(), int((time.monotonic() - started) * 1000))
    headers = signing.headers(
        signing_secrets=list(claim.signing_secrets),
        event_id=claim.event_id,
        timestamp=int(time.time()),  # the real time, whatever clock drives the schedule
        body=claim.body,
    )
    return post(target, claim.body, headers, deadline=deadline)


def delivery_attempt(*, delivery_id: int, now: datetime | None = None) -> str | None:
    """Make the delivery's next attempt if it is due at `now` (the real clock by default);
    the status it has after, or None when there was nothing to do (not due, done already,
    endpoint disabled, another worker on it) or its endpoint was deleted meanwhile."""
    now = now or timezone.now()
    claim = _claim(delivery_id, now)
    if claim is None:
        return None
    result = _send(claim)
    return _record(claim, result, now)


def _record(claim: Claim, result: PostResult, started_at: datetime) -> str | None:

    finished = started_at + timedelta(milliseconds=result.duration_ms)
    with transaction.atomic():
        endpoint_id = (
            WebhookDelivery.objects.filter(pk=claim.delivery_id)
            .values_list("endpoint_id", flat=True)
            .first()
        )
        endpoint = lock_endpoint(endpoint_id=endpoint_id) if endpoint_id else None
        delivery = lock_delivery(delivery_id=claim.delivery_id) if endpoint else None
        if delivery is None:  # the endpoint (and its log) was deleted during the attempt
            transaction.on_commit(lambda: _log(claim, result, "deleted"))
            return None
        WebhookAttempt.objects.create(
            delivery=delivery,
            number=claim.number,
            started_at=started_at,
            succeeded=result.succeeded,
            response_code=result.response_code,
            error=result.error,
            duration_ms=result.duration_ms,
        )
        if delivery.attempts != claim.number or delivery.status not in OPEN_STATUSES:
            return delivery.status  # a redelivery took over meanwhile: it decides
        fields = {
            "attempt_started_at": None,
            "response_code": result.response_code,
            "error": result.error,
            "duration_ms": result.duration_ms,
            "next_attempt_at": None,
        }
        schedule = retry_schedule()
        if result.succeeded:
            to_status = DeliveryStatus.DELIVERED
            fields["delivered_at"] = finished
            if endpoint.consecutive_failures:
                endpoint.consecutive_failures = 0
                endpoint.save(update_fields=["consecutive_failures", "updated_at"])
        elif delivery.round_attempts > len(schedule):
            to_status = DeliveryStatus.GAVE_UP
            endpoint.consecutive_failures += 1
            endpoint.save(update_fields=["consecutive_failures", "updated_at"])
            if (
                endpoint.enabled
                and endpoint.consecutive_failures >= settings.WEBHOOK_DISABLE_AFTER_GAVE_UP
            ):
                endpoint_disable(endpoint, reason=DisabledReason.FAILURES)
        else:
            to_status = DeliveryStatus.FAILED
            delay = schedule[delivery.round_attempts - 1]
            eta = fields["next_attempt_at"] = finished + timedelta(seconds=delay)
        delivery_set_status(delivery, to_status=to_status, fields=fields)
        # A longer wait than the broker may hold a message unacknowledged is left to the
        # minute sweep, which queues the delivery once it is due.
        if to_status == DeliveryStatus.FAILED and delay <= settings.CELERY_MAX_COUNTDOWN_SECONDS:
            deliveries_queue([claim.delivery_id], eta=eta)
    transaction.on_commit(lambda: _log(claim, result, delivery.status))
    return delivery.status


def _log(claim: Claim, result: PostResult, status: str) -> None:
    logger.info(
        "webhook %s attempt %s: %s (%s) %s",
        claim.event_id,
        claim.number,
        status,
        result.response_code or "-",
        result.error or "",
        extra={
            "event": "webhook_attempt",
            "webhook_event": claim.event_id,
            "delivery": claim.delivery_id,
            "attempt": claim.number,
            "status": status,
            "response_code": result.response_code,
        },
    )
