"""Thin Celery tasks: they take ids and call one service."""

from datetime import datetime

from celery import shared_task

from .hosts import services as host_services
from .hosts import tenancy
from .services import emails, extensions, lifecycle, provisioning


@shared_task(acks_late=True, autoretry_for=(OSError,), retry_backoff=True, max_retries=8)
def order_email(order_id: int, kind: str, as_of: str | None = None) -> bool:
    """Send one event's email to the customer (once; a repeat delivery sends nothing).

    `as_of` (ISO 8601) is the clock of whoever queued it: a reminder is checked against the
    moment the tick judged it due, not against a later delivery time."""
    now = datetime.fromisoformat(as_of) if as_of else None
    return emails.order_email_send(order_id=order_id, kind=kind, now=now)


@shared_task(acks_late=True, autoretry_for=(OSError,), retry_backoff=True, max_retries=8)
def extension_email(extension_id: int) -> bool:
    """Tell the customer a paid extension's new end (once; a repeat delivery sends nothing)."""
    return extensions.extension_email_send(extension_id=extension_id)


@shared_task(acks_late=True)
def order_readiness(order_id: int) -> str:
    """Check the order's SSH endpoints. While a host does not answer, the check is queued again
    after a growing pause (5 s, 10 s, 20 s ... at most 5 min) until the service gives up and the
    order waits in the operators' queue. Each check is a task of its own, so no worker slot is
    held during the pause."""
    return provisioning.order_check_readiness(order_id=order_id)


@shared_task(acks_late=True)
def rentals_tick() -> dict:
    """Celery beat, every minute: expired unpaid holds, hard stops and reminders."""
    report = lifecycle.rentals_tick()
    return {
        "released": report.released,
        "ended": report.ended,
        "reminded": report.reminded,
        "rechecked": report.rechecked,
    }


# ------------------------------------------------------------------------ host work
# Routed to the "hosts" queue (CELERY_TASK_ROUTES): a slow or dead host never delays payments.
# Each takes a tenancy or host id and calls one service; a host busy with another job is
# tried again shortly (one job at a time per host, different hosts in parallel).

HOST_BUSY_RETRY_SECONDS = 3


@shared_task(bind=True, acks_late=True, max_retries=200)
def host_provision(self, tenancy_id: int) -> str:
    """Give a tenancy its account, key and cards, then verify it as the tenant."""
    outcome = tenancy.tenancy_provision(tenancy_id=tenancy_id)
    if outcome == tenancy.Outcome.BUSY:
        raise self.retry(countdown=HOST_BUSY_RETRY_SECONDS)
    return outcome


@shared_task(bind=True, acks_late=True, max_retries=200)
def host_teardown(self, tenancy_id: int) -> str:
    """Take everything back from a tenancy and verify it; then its cards return to stock."""
    outcome = tenancy.tenancy_teardown(tenancy_id=tenancy_id)
    if outcome == tenancy.Outcome.BUSY:
        raise self.retry(countdown=HOST_BUSY_RETRY_SECONDS)
    return outcome


@shared_task(bind=True, acks_late=True, max_retries=200)
def host_check(
    self, host_id: int, make_available: bool = False, actor_id: int | None = None
) -> str:
    """The host check (sudo, the cards); `make_available` at registration and on a return."""
    from accounts.models import User

    actor = User.objects.filter(pk=actor_id).first() if actor_id else None
    result = host_services.host_check(host_id=host_id, actor=actor, make_available=make_available)
    if result.busy:
        raise self.retry(countdown=HOST_BUSY_RETRY_SECONDS)
    return "passed" if result.passed else f"failed: {result.detail}"
