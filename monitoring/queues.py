"""What waits in each Celery queue (config/queues.py), read from the broker: the number of
messages and, on Redis, the age of the oldest one (from the `published_at` header every
publish carries: config/celery_app.py); and what waits in the outbox to be published. For
/metrics, /readyz and /ops/health/. On Redis it reads with redis-py: web processes do not load
Celery or kombu."""

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


# kombu's Redis transport keeps a queue as a list under its name, and messages sent with a
# priority in lists named `<queue>\x06\x16<step>` (kombu.transport.redis: PRIORITY_STEPS, sep).
REDIS_PRIORITY_STEPS = (0, 3, 6, 9)
REDIS_PRIORITY_SEP = "\x06\x16"


def _redis_broker() -> bool:
    return settings.CELERY_BROKER_URL.startswith(("redis://", "rediss://"))


def _oldest_age(client, queue: str, now: float) -> float | None:
    raw = client.lindex(queue, -1)  # the list's tail is the oldest message
    if raw is None:
        return None
    try:
        published = json.loads(raw)["headers"]["published_at"]
    except (ValueError, KeyError, TypeError):
        return None
    return max(0.0, now - float(published))


def _redis_size(client, queue: str) -> int:
    with client.pipeline() as pipe:
        for step in REDIS_PRIORITY_STEPS:
            pipe.llen(f"{queue}{REDIS_PRIORITY_SEP}{step}" if step else queue)
        return sum(pipe.execute())


@contextmanager
def _redis_client(timeout: float):
    """The broker's Redis through redis-py, not kombu: web processes do not load Celery."""
    import redis

    client = redis.Redis.from_url(
        settings.CELERY_BROKER_URL, socket_connect_timeout=timeout, socket_timeout=timeout
    )
    try:
        client.ping()
        yield client
    finally:
        client.close()


@contextmanager
def _kombu_channel(timeout: float):
    """Another broker (the embedded SQLite default of `make run`): through Celery's own
    connection, loaded only for it."""
    from config.celery_app import app

    with app.connection_for_write(settings.CELERY_BROKER_URL, connect_timeout=timeout) as conn:
        conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=timeout)
        yield conn.default_channel  # opening a channel is what talks to the broker


def broker_reachable(timeout: float = CONNECT_TIMEOUT_SECONDS) -> None:
    """Raises unless the configured broker answers within `timeout` seconds: /readyz."""
    opener = _redis_client if _redis_broker() else _kombu_channel
    with opener(timeout):
        pass


def _kombu_size(channel, queue: str) -> int:
    """kombu's virtual transports count a queue nobody has declared yet as empty, where a
    passive declare would raise."""
    if hasattr(channel, "_size"):
        return int(channel._size(queue))
    return channel.queue_declare(queue=queue, passive=True).message_count


def queue_depths() -> list[QueueDepth]:
    """One entry per queue, in config/queues.py's order; messages None when the broker does
    not answer (the rest of the page still renders)."""
    now = time.time()
    try:
        if _redis_broker():
            with _redis_client(CONNECT_TIMEOUT_SECONDS) as client:
                return [
                    QueueDepth(name, _redis_size(client, name), _oldest_age(client, name, now))
                    for name in QUEUES
                ]
        with _kombu_channel(CONNECT_TIMEOUT_SECONDS) as channel:
            return [QueueDepth(name, _kombu_size(channel, name), None) for name in QUEUES]
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
