"""The lease: one scan at a time per network, without holding a row lock during RPC calls.

A scan claims the network's cursor with a short lease (taken under `skip_locked`, so a second
scan of the same network skips instead of waiting) and renews it while it reads. A scan killed
mid-way leaves a lease that runs out within PAYMENT_SCAN_LEASE_SECONDS, and the next scan takes
over from the cursor; on PostgreSQL at once, when the killed scan's database session is gone
(the lease records it). Seen in the fault run before: a payments worker SIGKILLed mid-scan
stopped every scan of the network for the 20 s of its lease, and a confirmation took 27 s.
"""

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from ..locks import lock_cursor
from ..models import ChainCursor


class LeaseLost(Exception):
    """Another scan took the cursor over (ours ran out): stop, write nothing."""


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.PAYMENT_SCAN_LEASE_SECONDS)


class Lease:
    """The claim of one scan on a network's cursor, renewed while the scan runs."""

    def __init__(self, network_key: str, token: str, until: datetime):
        self.network_key, self.token, self.until = network_key, token, until

    def renew(self) -> None:
        """Push the lease on when a third of it has passed; LeaseLost when it was taken."""
        now = timezone.now()
        if self.until - now > lease_duration() * 2 / 3:
            return
        until = now + lease_duration()
        if not ChainCursor.objects.filter(network=self.network_key, lease_token=self.token).update(
            lease_until=until
        ):
            raise LeaseLost(self.network_key)
        self.until = until

    def release(self, *, error: str = "") -> None:
        ChainCursor.objects.filter(network=self.network_key, lease_token=self.token).update(
            lease_token="",
            lease_until=None,
            lease_session=None,
            last_error=error[:500],
            last_error_at=timezone.now() if error else None,
        )


def claim(network_key: str, *, now: datetime | None = None) -> tuple[ChainCursor, Lease] | None:
    """Take the network's cursor for one scan, or None while another scan's lease runs."""
    now = now or timezone.now()
    with transaction.atomic():
        ChainCursor.objects.get_or_create(network=network_key, defaults={"next_block": 0})
        cursor = lock_cursor(network_key, skip_locked=True)
        if cursor is None:
            return None
        if cursor.lease_until and cursor.lease_until > now and _session_alive(cursor.lease_session):
            return None
        token = str(uuid.uuid4())
        cursor.lease_token, cursor.lease_until = token, now + lease_duration()
        cursor.lease_session = _this_session()
        cursor.save(update_fields=["lease_token", "lease_until", "lease_session"])
    return cursor, Lease(network_key, token, cursor.lease_until)


def _this_session() -> int | None:
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _session_alive(session: int | None) -> bool:
    """Whether the database session that took a lease is still connected (True when it is
    not known: another database, a lease from before sessions were recorded)."""
    if session is None or connection.vendor != "postgresql":
        return True
    with connection.cursor() as cursor:
        cursor.execute("SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = %s)", [session])
        return cursor.fetchone()[0]
