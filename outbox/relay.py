"""The relay process (`manage.py outbox_relay`): publishes the tasks that web processes commit.

Web processes do not load Celery: a commit that enqueued a task notifies OUTBOX_NOTIFY_CHANNEL
(PostgreSQL's NOTIFY, delivered at the commit and never for a rollback), and the relay, which
LISTENs, publishes at once. Without a notification it looks every OUTBOX_RELAY_WAIT_SECONDS (the
embedded SQLite default has no NOTIFY; a notification sent while the relay was reconnecting).

A broker that is down leaves the messages in their rows: the relay tries again after 1, 2, 4 ...
up to MAX_BACKOFF seconds. A database that goes away is reconnected to, the same way. Two relays
are safe: each message is claimed before it is sent (outbox/messages.py).
"""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from .messages import publish_pending
from .models import OutboxMessage

logger = logging.getLogger(__name__)

BATCH = 1000  # messages per pass (publish_pending's limit)
MAX_BACKOFF = 10.0


@dataclass
class RelayStats:
    passes: int = 0
    published: int = 0
    broker_failures: int = 0
    database_failures: int = 0


def _pending_now() -> bool:
    """Messages still unpublished and not claimed by another publisher."""
    return (
        OutboxMessage.objects.filter(published_at__isnull=True)
        .exclude(claimed_until__gt=timezone.now())
        .exists()
    )


def _listen() -> None:
    if connection.vendor == "postgresql":
        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute(f'LISTEN "{settings.OUTBOX_NOTIFY_CHANNEL}"')


def _wait(seconds: float, should_stop: Callable[[], bool]) -> None:
    """Until a notification arrives (PostgreSQL), `seconds` pass or `should_stop()` says so
    (looked at every second at least: psycopg's wait goes on through a signal)."""
    deadline = time.monotonic() + seconds
    while not should_stop() and (left := deadline - time.monotonic()) > 0:
        if connection.vendor != "postgresql":
            time.sleep(min(0.1, left))
            continue
        with connection.wrap_database_errors:  # psycopg's errors as Django's DatabaseError
            for _notify in connection.connection.notifies(timeout=min(left, 1.0), stop_after=1):
                return


def run(
    *,
    should_stop: Callable[[], bool],
    wait_seconds: float | None = None,
    on_pass: Callable[[RelayStats], None] | None = None,
) -> RelayStats:
    """Relay until `should_stop()` says so; returns what it did."""
    # Publishing needs Celery in this process (a web process has none).
    import config.celery_app  # noqa: F401

    wait_seconds = settings.OUTBOX_RELAY_WAIT_SECONDS if wait_seconds is None else wait_seconds
    stats = RelayStats()
    listening = False
    backoff = 0.0
    while not should_stop():
        try:
            if not listening:
                _listen()
                listening = True
            published = publish_pending(limit=BATCH)
            stats.passes += 1
            stats.published += len(published)
            if published:
                logger.info("outbox relay: published %d message(s)", len(published))
            if len(published) == BATCH:
                backoff = 0.0
                continue  # more wait: no pause
            if _pending_now():
                # What is left could not be published: the broker is down (the error is in the
                # rows and the log). Try again later, not at every notification.
                stats.broker_failures += 1
                backoff = min(max(1.0, backoff * 2), MAX_BACKOFF)
                if on_pass:
                    on_pass(stats)
                _sleep(backoff, should_stop)
                continue
            backoff = 0.0
            if on_pass:
                on_pass(stats)
            _wait(wait_seconds, should_stop)
        except DatabaseError as exc:
            stats.database_failures += 1
            logger.warning("outbox relay: the database failed, reconnecting: %s", exc)
            connection.close()
            listening = False
            backoff = min(max(1.0, backoff * 2), MAX_BACKOFF)
            _sleep(backoff, should_stop)
    return stats


def _sleep(seconds: float, should_stop: Callable[[], bool]) -> None:
    deadline = time.monotonic() + seconds
    while not should_stop() and time.monotonic() < deadline:
        time.sleep(0.1)
