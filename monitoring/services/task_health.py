"""Recording Celery task outcomes (called by monitoring.signals, in whatever process ran the
task). One UPDATE per outcome; the first outcome of a task name inserts its row first."""

from datetime import datetime

from django.db.models import Case, F, Value, When
from django.utils import timezone

from ..models import TaskHealth

ERROR_LENGTH = TaskHealth._meta.get_field("last_error").max_length


def _apply(task: str, changes: dict) -> None:
    if TaskHealth.objects.filter(task=task).update(**changes):
        return
    TaskHealth.objects.bulk_create([TaskHealth(task=task)], ignore_conflicts=True)
    TaskHealth.objects.filter(task=task).update(**changes)


def task_failure_record(*, task: str, error: str, at: datetime | None = None) -> None:
    """A run of `task` failed (or is being retried): one more failure in a row."""
    at = at or timezone.now()
    _apply(
        task,
        {
            "consecutive_failures": F("consecutive_failures") + 1,
            "failures_total": F("failures_total") + 1,
            # The streak starts with its first failure.
            "failing_since": Case(
                When(consecutive_failures=0, then=Value(at)), default=F("failing_since")
            ),
            "last_failure_at": at,
            "last_error": error[:ERROR_LENGTH],
        },
    )


def task_success_record(*, task: str, at: datetime | None = None) -> None:
    """A run of `task` succeeded: the streak of failures, if any, ends."""
    _apply(
        task,
        {
            "consecutive_failures": 0,
            "successes_total": F("successes_total") + 1,
            "failing_since": None,
            "last_success_at": at or timezone.now(),
        },
    )
