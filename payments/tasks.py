"""Thin Celery tasks over the payments services."""

from datetime import UTC, timedelta

from celery import shared_task
from django.utils import timezone

from .services.reconciliation import reconciliation_run


@shared_task(acks_late=True)
def reconcile_daily() -> int:
    """Celery beat, every night: reconcile yesterday (UTC) and store the run; returns its id.

    Running it twice stores two identical reports, which is harmless.
    """
    yesterday = timezone.now().astimezone(UTC).date() - timedelta(days=1)
    return reconciliation_run(period_start=yesterday, period_end=yesterday).pk
