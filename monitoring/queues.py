"""What waits in each Celery queue (config/queues.py), read from the broker: the number of
messages and, on Redis, the age of the oldest one (from the `published_at` header every
publish carries: config/celery_app.py); and what waits in the outbox to be published. For
/metrics and /ops/health/."""

import json
import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings

from config.queues import QUEUES

from .redact import describe_error

logger = logging.getLogger(__name__)
CONNECT_TIMEOUT_SECONDS = 2


@dataclass(frozen=True, slots=True)
class QueueDepth:
    name: str
    messages: int | None  # None: the broker could not be read
    oldest_age_seconds: float | None  # None: empty, unknown, or not readable on this broker


def _oldest_age(channel, queue: str, now: float) -> float | None:
    client = getattr(channel, "client", None)  # Redis: the list's tail is the oldest message
    if client is None:
        return None
    raw = client.lindex(queue, -1)
    if raw is None:
        return None
    try:
        published = json.loads(raw)["headers"]["published_at"]
    except (ValueError, KeyError, TypeError):
        return None
    return max(0.0, now - float(published))


def _size(channel, queue: str) -> int:
    """Messages waiting: kombu's virtual transports (Redis, the embedded SQLite broker) count
    a queue nobody has declared yet as empty, where a passive declare would raise."""
    if hasattr(channel, "_size"):
        return int(channel._size(queue))
    return channel.queue_declare(queue=queue, passive=True).message_count


@contextmanager
def broker_channel(timeout: float = CONNECT_TIMEOUT_SECONDS):
    """A channel on the configured broker, connected within `timeout` seconds or failing:
    what /readyz and the queues' table read through."""
    from config.celery_app import app

    with app.connection_for_write(settings.CELERY_BROKER_URL, connect_timeout=timeout) as conn:
        conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=timeout)
        yield conn.default_channel  # opening a channel is what talks to the broker


def queue_depths() -> list[QueueDepth]:
    """One entry per queue, in config/queues.py's order; messages None when the broker does
    not answer (the rest of the page still renders)."""
    now = time.time()
    try:
        with broker_channel() as channel:
            depths = []
            for name in QUEUES:
                messages = _size(channel, name)
                depths.append(QueueDepth(name, messages, _oldest_age(channel, name, now)))
            return depths
    except Exception as exc:
        logger.warning("queues: the broker could not be read: %s", describe_error(exc))
        return [QueueDepth(name, None, None) for name in QUEUES]


@dataclass(frozen=True, slots=True)
class OutboxBacklog:
    messages: int
    oldest_age_seconds: float | None


def outbox_backlog() -> OutboxBacklog:
    """Tasks written but not yet published to the broker (it was down, or the relay has not
    run yet): one query."""
    from django.db.models import Count, Min
    from django.utils import timezone

    from outbox.models import OutboxMessage

    found = OutboxMessage.objects.filter(published_at__isnull=True).aggregate(
        n=Count("pk"), oldest=Min("created_at")
    )
    oldest = found["oldest"]
    age = (timezone.now() - oldest).total_seconds() if oldest else None
    return OutboxBacklog(found["n"], age)
