"""Putting deliveries on the broker, marked as queued in the same transaction (`queued_at`), so
the minute sweep never queues a delivery whose message is still waiting (seen: 451 deliveries
queued twice behind slow receivers)."""

from collections.abc import Iterable
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from outbox.messages import enqueue_many

from ..models import WebhookDelivery


def deliveries_queue(delivery_ids: Iterable[int], *, eta: datetime | None = None) -> list[int]:
    """Mark the deliveries queued now and publish one attempt of each after the commit (at
    `eta`, if given: never later than the broker may hold a message, CELERY_MAX_COUNTDOWN_SECONDS).
    """

    ids = sorted(set(delivery_ids))
    if not ids:
        return ids
    with transaction.atomic():
        WebhookDelivery.objects.filter(pk__in=ids).update(queued_at=timezone.now())
        enqueue_many(
            "api.webhooks.tasks.webhook_deliver", [(delivery_id,) for delivery_id in ids], eta=eta
        )
    return ids
