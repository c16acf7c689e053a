"""Celery signal handlers that record every task's outcome in TaskHealth.

They never raise: a failure to record (the database down, the task's own transaction broken)
is logged and the task's outcome stays what it was. Each write runs in its own savepoint, so a
failed one cannot break a transaction around an eager task."""

import contextlib
import logging

from django.db import transaction

from .redact import describe_error

logger = logging.getLogger(__name__)


def _record(sender, error=None, *, failed: bool) -> None:
    task = "?"
    try:
        from .services.task_health import task_failure_record, task_success_record

        task = getattr(sender, "name", None) or repr(sender)
        with transaction.atomic():
            if failed:
                task_failure_record(task=task, error=describe_error(error))
            else:
                task_success_record(task=task)
    except Exception:
        # A handler that cannot even log still must not raise.
        with contextlib.suppress(Exception):
            logger.exception("the outcome of task %s could not be recorded", task)


def on_task_success(sender=None, **_kwargs) -> None:
    _record(sender, failed=False)


def on_task_failure(sender=None, exception=None, **_kwargs) -> None:
    _record(sender, exception, failed=True)


def on_task_retry(sender=None, reason=None, **_kwargs) -> None:
    _record(sender, reason, failed=True)


def connect_task_signals() -> None:
    """Called by config/celery_app.py: only processes that run Celery load it."""
    from celery.signals import task_failure, task_retry, task_success

    task_success.connect(on_task_success, weak=False, dispatch_uid="monitoring.task_success")
    task_failure.connect(on_task_failure, weak=False, dispatch_uid="monitoring.task_failure")
    task_retry.connect(on_task_retry, weak=False, dispatch_uid="monitoring.task_retry")
