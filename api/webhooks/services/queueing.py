"""Putting deliveries on the broker, marked as queued in the same transaction (`queued_at`), so
the minute sweep never queues a delivery whose message is still waiting (seen: 451 deliveries
queued twice behind slow receivers)."""

from collections.abc import Iterable
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from ..models import WebhookDelivery


def deliveries_queue(delivery_ids: Iterable[int], *, eta: datetime | None = None) -> list[int]:
    """Mark the deliveries queued now and publish one attempt of each after the commit (at
    `eta`, if given: never later than the broker may hold a message, CELERY_MAX_COUNTDOWN_SECONDS).
    """
    from .. import tasks

    ids = sorted(set(delivery_ids))
    if not ids:
        return ids
    with transaction.atomic():
        WebhookDelivery.objects.filter(pk__in=ids).update(queued_at=timezone.now())
        for delivery_id in ids:
            if eta is None:
                transaction.on_commit(lambda pk=delivery_id: tasks.webhook_deliver.delay(pk))
            else:
                transaction.on_commit(
                    lambda pk=delivery_id: tasks.webhook_deliver.apply_async(args=[pk], eta=eta)
                )
    return ids
