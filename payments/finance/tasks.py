"""Thin Celery tasks of finance. Names stay `payments.tasks.<name>` (beat schedule, routes,
messages already queued)."""

from datetime import UTC, timedelta

from celery import shared_task
from django.utils import timezone

from .services import reconciliation_run


@shared_task(name="payments.tasks.reconcile_daily", acks_late=True)
def reconcile_daily() -> int:
    """Celery beat, every night: reconcile yesterday (UTC) and store the run; returns its id.

    Running it twice stores two identical reports, which is harmless.
    """
    yesterday = timezone.now().astimezone(UTC).date() - timedelta(days=1)
    return reconciliation_run(period_start=yesterday, period_end=yesterday).pk
