"""Thin Celery tasks: they take ids and call one service."""

from datetime import datetime

from celery import shared_task

from .services import delivery, emails, sweep


@shared_task(acks_late=True)
def webhook_deliver(delivery_id: int, as_of: str | None = None) -> str | None:
    """One attempt of a delivery, if it is due (a repeat or an early task does nothing).
    `as_of` (ISO 8601): the clock of whoever queued it (the sweep)."""
    now = datetime.fromisoformat(as_of) if as_of else None
    return delivery.delivery_attempt(delivery_id=delivery_id, now=now)


@shared_task(acks_late=True)
def webhooks_sweep() -> dict:
    """Celery beat, every minute: lost dispatches and due retries."""
    report = sweep.webhooks_sweep()
    return {"dispatched": report.dispatched, "queued": report.queued}


@shared_task(acks_late=True, autoretry_for=(OSError,), retry_backoff=True, max_retries=8)
def webhook_disabled_email(endpoint_id: int) -> bool:
    """Tell the owner their endpoint was disabled after failures (once)."""
    return emails.endpoint_disabled_email_send(endpoint_id=endpoint_id)
