"""Thin Celery tasks of the crypto payments. Names stay `payments.tasks.<name>` (beat
schedule, routes, messages already queued)."""

from celery import shared_task

from .services import emails, sweep


@shared_task(name="payments.tasks.expire_payments", acks_late=True)
def expire_payments() -> int:
    """Every minute: expire payments whose time ran out, and close those of extensions that
    can no longer be paid (their rental ended)."""
    return sweep.payments_sweep()


@shared_task(
    name="payments.tasks.payment_event_emails",
    acks_late=True,
    autoretry_for=(OSError,),
    retry_backoff=True,
    max_retries=8,
)
def payment_event_emails(event_ids: list[int]) -> int:
    """Tell customers what happened to their money (closed, under review, credited), one
    email per event, once each: a retry after a failed send skips those already sent."""
    return sum(emails.payment_event_email_send(event_id=event_id) for event_id in event_ids)
