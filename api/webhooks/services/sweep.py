"""The minute sweep (Celery beat): no delivery is lost when a worker dies or a broker message is.

It queues every open delivery whose next attempt is due and that has no message waiting on the
broker (a retry left to it, a delivery put off because its endpoint had attempts enough at once,
an attempt whose worker was killed and whose lease has passed), or whose message must have been
lost. Queuing twice would be harmless (an attempt claims its delivery first) but a backlog would
grow with every minute. Outbox events whose dispatch was lost are the outbox's own
business (its beat task, outbox.tasks.outbox_redispatch): the bottom of the house is not driven
from the webhooks above it.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from ..models import OPEN_STATUSES, WebhookDelivery
from .queueing import deliveries_queue

BATCH = 500


@dataclass
class SweepReport:
    queued: list[int] = field(default_factory=list)


def webhooks_sweep(*, now: datetime | None = None) -> SweepReport:
    """`now`: the real clock by default; tests pass another to choose what is due (the
    queued attempts themselves always run on the real clock). A delivery whose message is
    still waiting on the broker is left alone, unless it was queued so long ago that the
    message must have been lost (WEBHOOK_QUEUED_MESSAGE_LOST_AFTER_SECONDS)."""
    now = now or timezone.now()
    lost_before = now - timedelta(seconds=settings.WEBHOOK_QUEUED_MESSAGE_LOST_AFTER_SECONDS)
    report = SweepReport()
    due = (
        WebhookDelivery.objects.filter(
            status__in=OPEN_STATUSES, next_attempt_at__lte=now, endpoint__enabled=True
        )
        .filter(Q(queued_at__isnull=True) | Q(queued_at__lte=lost_before))
        .order_by("next_attempt_at", "pk")
        .values_list("pk", flat=True)[:BATCH]
    )
    report.queued = deliveries_queue(list(due))
    return report
