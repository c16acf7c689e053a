"""The payments' Celery tasks, for Celery's autodiscovery (it imports `<app>.tasks`): each room
keeps its own thin tasks (`payments/<room>/tasks.py`), and each task keeps its name
`payments.tasks.<name>` whatever its room, so the beat schedule, CELERY_TASK_ROUTES and messages
already queued find it. Nothing in a room imports this module."""

from .chain.tasks import payment_check, scan_all_networks, scan_network
from .crypto.tasks import expire_payments, payment_event_emails
from .finance.tasks import reconcile_daily
from .withdrawals.tasks import withdrawal_check, withdrawal_event_email, withdrawals_check_sent

__all__ = [
    "expire_payments",
    "payment_check",
    "payment_event_emails",
    "reconcile_daily",
    "scan_all_networks",
    "scan_network",
    "withdrawal_check",
    "withdrawal_event_email",
    "withdrawals_check_sent",
]
