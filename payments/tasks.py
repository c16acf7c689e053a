"""Thin Celery tasks over the payments services."""

from datetime import UTC, timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from .chain.rpc import RpcError
from .networks import enabled_networks
from .services import emails, scanning, sweep, withdrawals
from .services.reconciliation import reconciliation_run
from .services.withdrawals import emails as withdrawal_emails


@shared_task(acks_late=True)
def reconcile_daily() -> int:
    """Celery beat, every night: reconcile yesterday (UTC) and store the run; returns its id.

    Running it twice stores two identical reports, which is harmless.
    """
    yesterday = timezone.now().astimezone(UTC).date() - timedelta(days=1)
    return reconciliation_run(period_start=yesterday, period_end=yesterday).pk


# ------------------------------------------------------------------------- the watcher


@shared_task(acks_late=True)
def scan_all_networks() -> list[str]:
    """Celery beat, every few seconds: one scan task per enabled network."""
    keys = list(enabled_networks())
    for key in keys:
        scan_network.apply_async(args=[key], expires=settings.PAYMENT_SCAN_INTERVAL_SECONDS * 3)
    return keys


@shared_task(
    acks_late=True,
    autoretry_for=(RpcError,),
    retry_backoff=2,  # 2, 4, 8, 16, 32 s: one scan task per network, no herd to spread
    retry_backoff_max=60,
    retry_jitter=False,
    max_retries=5,
)
def scan_network(network_key: str) -> dict:
    report = scanning.scan_network(network_key=network_key)
    return {"stored": report.stored, "confirmed": report.confirmed, "reorged": report.reorged}


@shared_task(
    acks_late=True,
    autoretry_for=(RpcError,),
    retry_backoff=2,
    retry_backoff_max=120,
    retry_jitter=False,
    max_retries=8,
)
def payment_check(payment_id: int) -> int:
    """The customer declared a payment: look now."""
    return scanning.payment_check(payment_id=payment_id).stored


@shared_task(acks_late=True)
def expire_payments() -> int:
    """Every minute: expire payments whose time ran out, and close those of extensions that
    can no longer be paid (their rental ended)."""
    return sweep.payments_sweep()


@shared_task(acks_late=True, autoretry_for=(OSError,), retry_backoff=True, max_retries=8)
def payment_event_emails(event_ids: list[int]) -> int:
    """Tell customers what happened to their money (closed, under review, credited), one
    email per event, once each: a retry after a failed send skips those already sent."""
    return sum(emails.payment_event_email_send(event_id=event_id) for event_id in event_ids)


# ------------------------------------------------------------------------- withdrawals


@shared_task(
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


@shared_task(acks_late=True, autoretry_for=(OSError,), retry_backoff=True, max_retries=8)
def withdrawal_event_email(event_id: int) -> bool:
    """Tell the customer their withdrawal was paid or rejected, once."""
    return withdrawal_emails.withdrawal_event_email_send(event_id=event_id)


@shared_task(acks_late=True)
def withdrawals_check_sent() -> int:
    """Celery beat: one check per sent withdrawal (they wait for confirmations)."""
    ids = withdrawals.withdrawals_to_check()
    for withdrawal_id in ids:
        withdrawal_check.apply_async(
            args=[withdrawal_id], expires=settings.WITHDRAWAL_CHECK_INTERVAL_SECONDS * 3
        )
    return len(ids)
