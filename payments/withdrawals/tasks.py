"""Thin Celery tasks of the withdrawals. Names stay `payments.tasks.<name>` (beat schedule,
routes, messages already queued)."""

from celery import shared_task
from django.conf import settings

from ..chain.rpc import RpcError
from . import services as withdrawals
from .services import emails as withdrawal_emails


@shared_task(
    name="payments.tasks.withdrawal_check",
    acks_late=True,
    autoretry_for=(RpcError,),
    retry_backoff=2,
    retry_backoff_max=120,
    retry_jitter=False,
    max_retries=8,
)
def withdrawal_check(withdrawal_id: int) -> str:
    """Finance entered the hash of a withdrawal's transfer (or the sweep came by): look at it
    on chain; paid once it carries the transfer with its confirmations."""
    return withdrawals.withdrawal_check(withdrawal_id=withdrawal_id)


@shared_task(
    name="payments.tasks.withdrawal_event_email",
    acks_late=True,
    autoretry_for=(OSError,),
    retry_backoff=True,
    max_retries=8,
)
def withdrawal_event_email(event_id: int) -> bool:
    """Tell the customer their withdrawal was paid or rejected, once."""
    return withdrawal_emails.withdrawal_event_email_send(event_id=event_id)


@shared_task(name="payments.tasks.withdrawals_check_sent", acks_late=True)
def withdrawals_check_sent() -> int:
    """Celery beat: one check per sent withdrawal (they wait for confirmations)."""
    ids = withdrawals.withdrawals_to_check()
    for withdrawal_id in ids:
        withdrawal_check.apply_async(
            args=[withdrawal_id], expires=settings.WITHDRAWAL_CHECK_INTERVAL_SECONDS * 3
        )
    return len(ids)
