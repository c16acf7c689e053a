"""The minute sweep (Celery beat): no delivery is lost when a worker dies or a broker message is.

It queues every open delivery whose next attempt is due (a retry whose task was lost, an
attempt whose worker was killed and whose lease has passed). Queuing twice is harmless: an
attempt claims its delivery first. Outbox events whose dispatch was lost are the outbox's own
business (its beat task, outbox.tasks.outbox_redispatch): the bottom of the house is not driven
from the webhooks above it.
"""

from dataclasses import dataclass, field
from datetime import datetime

from django.utils import timezone

from ..models import OPEN_STATUSES, WebhookDelivery

BATCH = 500


@dataclass
class SweepReport:
    queued: list[int] = field(default_factory=list)


def webhooks_sweep(*, now: datetime | None = None) -> SweepReport:
    """`now`: the real clock by default; tests pass another to choose what is due (the
    queued attempts themselves always run on the real clock)."""
    from .. import tasks

    now = now or timezone.now()
    report = SweepReport()
    due = (
        WebhookDelivery.objects.filter(
            status__in=OPEN_STATUSES, next_attempt_at__lte=now, endpoint__enabled=True
        )
        .order_by("next_attempt_at", "pk")
        .values_list("pk", flat=True)[:BATCH]
    )
    for delivery_id in list(due):
        tasks.webhook_deliver.delay(delivery_id)
        report.queued.append(delivery_id)
    return report
