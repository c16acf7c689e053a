"""Thin Celery tasks: they take ids and call one service."""

from celery import shared_task

from .services import delivery, emails, sweep


@shared_task(acks_late=True)
def webhook_deliver(delivery_id: int, as_of: str | None = None) -> str | None:
    """One attempt of a delivery, if it is due (a repeat or an early task does nothing), on
    the real clock: a message that waited in a backlog signs and leases with the time it
    runs at. `as_of` is ignored (messages queued by older versions carry it)."""
    return delivery.delivery_attempt(delivery_id=delivery_id)


@shared_task(acks_late=True)
def webhooks_sweep() -> dict:
    """Celery beat, every minute: due retries (lost outbox dispatches are the outbox's own
    beat task's: outbox.tasks.outbox_redispatch)."""
    report = sweep.webhooks_sweep()
    return {"queued": report.queued}


@shared_task(acks_late=True, autoretry_for=(OSError,), retry_backoff=True, max_retries=8)
def webhook_disabled_email(endpoint_id: int) -> bool:
    """Tell the owner their endpoint was disabled after failures (once)."""
    return emails.endpoint_disabled_email_send(endpoint_id=endpoint_id)
