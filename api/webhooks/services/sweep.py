"""The minute sweep (Celery beat): nothing is lost when a worker dies or a broker message is.

It dispatches outbox events never dispatched, then queues every open delivery whose next
attempt is due (a retry whose task was lost, an attempt whose worker was killed and whose
lease has passed). Queuing twice is harmless: an attempt claims its delivery first.
"""

from dataclasses import dataclass, field
from datetime import datetime

from django.utils import timezone

from outbox.services import outbox_dispatch_pending

from ..models import OPEN_STATUSES, WebhookDelivery

BATCH = 500


@dataclass
class SweepReport:
    dispatched: list[int] = field(default_factory=list)
    queued: list[int] = field(default_factory=list)


def webhooks_sweep(*, now: datetime | None = None) -> SweepReport:
    """`now`: the real clock by default; tests pass another to choose what is due (the
    queued attempts themselves always run on the real clock). A handler that fails for an
    event does not stop it (outbox_dispatch_pending logs and skips that event)."""
    from .. import tasks

    now = now or timezone.now()
    report = SweepReport(dispatched=outbox_dispatch_pending(now=now, limit=BATCH))
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
