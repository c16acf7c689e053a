"""Tasks leave through the outbox: `enqueue(task, *args)` writes an OutboxMessage in the caller's
transaction and publishes it after the commit; `publish_pending` (the relay, on beat every
OUTBOX_RELAY_SECONDS) publishes what could not be published then.

Seen before: a web server that could not reach the broker answered 500 to a balance payment
that had committed, and the "ended" and "extended" emails of actions taken meanwhile were never
sent. Now the commit holds the message; publishing is at least once (a publisher killed between
the broker's acceptance and `published_at` leaves the row to the relay, which publishes it
again), and every task is safe to run twice.

Who publishes: a process that runs Celery (a worker, beat, the relay, the tests) publishes its
own messages after the commit. A web process does not load Celery at all (13 MB of a worker's
memory, and the broker's connections): its commit notifies the relay process (`manage.py
outbox_relay`, PostgreSQL's LISTEN/NOTIFY; on the embedded SQLite default the relay looks every
second), which publishes at once. Beat's `outbox_relay` every OUTBOX_RELAY_SECONDS is the
backstop when no relay process runs.

Publishing is claimed per row (`claimed_until`), so two publishers never both publish a message;
the broker is asked once, without Celery's retries, so a broker that is down costs one failed
connection, not seconds of retries.
"""

import logging
import sys
import uuid
from collections.abc import Iterable
from datetime import datetime, timedelta
from importlib import import_module

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from .locks import lock_unclaimed_messages
from .models import OutboxMessage

logger = logging.getLogger(__name__)

# How long a publisher's claim on a row lasts: the relay leaves it alone meanwhile.
CLAIM = timedelta(seconds=60)
# Published rows are kept this long (what was sent, when), then removed by the relay.
KEEP_PUBLISHED = timedelta(days=7)


def _name(task) -> str:
    return task if isinstance(task, str) else task.name


def _celery_app():
    """This process's Celery app when it has loaded one (a worker, beat, the relay, the
    tests), else None: a web process never imports Celery (config/celery_app.py)."""
    module = sys.modules.get("config.celery_app")
    return module.app if module is not None else None


def _after_commit(ids: list[int]) -> None:
    """Publish these messages after the commit when this process runs Celery; else tell the
    relay process, in the same transaction (PostgreSQL delivers a NOTIFY at the commit, and
    never for a rollback). robust: a failure to publish is logged and left to the relay; it
    never reaches the request or the task that committed."""
    if _celery_app() is not None:
        transaction.on_commit(lambda: publish(ids), robust=True)
    elif connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_notify(%s, '')", [settings.OUTBOX_NOTIFY_CHANNEL])


def enqueue(
    task,
    *args,
    countdown: float | None = None,
    eta: datetime | None = None,
    **kwargs,
) -> OutboxMessage:
    """Write the task's message in the current transaction (or at once outside one) and
    publish it after the commit. `task`: a Celery task or its registered name."""
    if countdown is not None:
        eta = timezone.now() + timedelta(seconds=countdown)
    message = OutboxMessage.objects.create(
        task=_name(task), args=list(args), kwargs=kwargs, eta=eta
    )
    _after_commit([message.pk])
    return message


class _TransactionMessage:
    """The message `enqueue_once_per_transaction` wrote in the current transaction."""

    __slots__ = ("hooks", "token", "message_id", "entry", "published")

    def __init__(self, hooks: list, token: str, message_id: int):
        self.hooks = hooks  # connection.run_on_commit: a new list at every commit or rollback
        self.token = token
        self.message_id = message_id
        self.entry = None  # its latest publication among the transaction's commit callbacks
        self.published = False

    def publish(self) -> None:
        if not self.published:  # registered again behind later callbacks: the first runs
            self.published = True
            publish([self.message_id])

    def publish_after_commit(self) -> None:
        transaction.on_commit(self.publish, robust=True)
        self.entry = self.hooks[-1]


def enqueue_once_per_transaction(task) -> str:
    """One message of `task` per transaction, whatever the number of calls: the first call
    writes it (its one argument a fresh token) and queues its publication after the commit;
    every call returns the token, for the rows the task will look for (the outbox's events of
    one commit: `outbox.services.outbox_emit_many`).

    A transaction is told by Django's list of commit callbacks, which is a new list at every
    commit, rollback and rollback to a savepoint: after a rollback to a savepoint (which may
    have removed the message) the next call writes a new message, never lost. A call after
    other callbacks were registered registers the publication again behind them (the first
    that runs publishes, the others do nothing): so a test that runs the callbacks registered
    from some point on (captureOnCommitCallbacks) publishes what joined meanwhile. Once
    published, the next call writes a new message."""
    if not connection.in_atomic_block:
        with transaction.atomic():
            return enqueue_once_per_transaction(task)
    hooks = connection.run_on_commit
    name = f"_outbox_once_{_name(task)}"
    current = getattr(connection, name, None)
    if current is not None and current.hooks is hooks and not current.published:
        if current.entry is not None and hooks[-1] is not current.entry:
            current.publish_after_commit()
        return current.token
    token = uuid.uuid4().hex
    message = OutboxMessage.objects.create(task=_name(task), args=[token])
    current = _TransactionMessage(hooks, token, message.pk)
    if _celery_app() is not None:
        current.publish_after_commit()
    else:
        _after_commit([message.pk])
    setattr(connection, name, current)
    return current.token


def enqueue_many(task, calls: Iterable[tuple], *, eta: datetime | None = None) -> list[int]:
    """`enqueue` for many calls of one task (each a tuple of arguments): one INSERT whatever
    their number, published together after the commit; the messages' ids."""
    rows = OutboxMessage.objects.bulk_create(
        [OutboxMessage(task=_name(task), args=list(args), eta=eta) for args in calls]
    )
    ids = [row.pk for row in rows]
    if ids:
        _after_commit(ids)
    return ids


def _claim(message_ids: Iterable[int], now: datetime) -> list[OutboxMessage]:
    """Take the rows that are still unpublished and unclaimed, claimed in one transaction."""
    with transaction.atomic():
        rows = lock_unclaimed_messages(message_ids, now)
        OutboxMessage.objects.filter(pk__in=[row.pk for row in rows]).update(
            claimed_until=now + CLAIM
        )
    return rows


def _send(message: OutboxMessage) -> None:
    """Publish by name (routed to its kind's queue: config/queues.py); the task's module need
    not be imported here. Tests run it in this process instead (CELERY_TASK_ALWAYS_EAGER)."""
    from config.celery_app import app

    if app.conf.task_always_eager:
        # The task's module registers it (not the loader's import of every module, which sets
        # Django up again: logging configured anew).
        import_module(message.task.rsplit(".", 1)[0])
        app.tasks[message.task].apply_async(args=message.args, kwargs=message.kwargs)
        return
    eta = message.eta if message.eta is not None and message.eta > timezone.now() else None
    app.send_task(message.task, args=message.args, kwargs=message.kwargs, eta=eta, retry=False)


def publish(message_ids: Iterable[int], *, now: datetime | None = None) -> list[int]:
    """Publish these messages if nobody else is; the ids published now. Stops at the first
    broker failure (the others would fail the same way), leaving the rest to the relay."""
    from config.celery_app import app

    now = now or timezone.now()
    published = []
    claimed = _claim(message_ids, now)
    for position, message in enumerate(claimed):
        if app.conf.task_always_eager:
            # Tests: "publishing" runs the task here; what it raises is the task's own error,
            # not a broker's, and reaches the caller as it would in a worker's log.
            _mark_published(message)
            published.append(message.pk)
            _send(message)
            continue
        try:
            _send(message)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"[:500]
            OutboxMessage.objects.filter(pk=message.pk).update(
                claimed_until=None, attempts=message.attempts + 1, last_error=error
            )
            logger.warning(
                "outbox message %s (%s) not published, left to the relay: %s",
                message.pk,
                message.task,
                error,
                extra={"event": "outbox_publish_failed", "task": message.task},
            )
            # The rest of the batch is not tried: its claims go too, so that another publisher
            # (beat's relay, with a broker of its own) need not wait for them to run out. Seen
            # in the fault run: messages held by a relay cut from the broker waited 126 s.
            rest = [later.pk for later in claimed[position + 1 :]]
            OutboxMessage.objects.filter(pk__in=rest).update(claimed_until=None)
            break
        _mark_published(message)
        published.append(message.pk)
    return published


def _mark_published(message: OutboxMessage) -> None:
    OutboxMessage.objects.filter(pk=message.pk).update(
        published_at=timezone.now(), claimed_until=None, attempts=message.attempts + 1
    )


def publish_pending(*, now: datetime | None = None, limit: int = 1000) -> list[int]:
    """The relay: publish every message left unpublished (the broker was down at its commit,
    its publisher died), oldest first; remove published rows older than KEEP_PUBLISHED."""
    now = now or timezone.now()
    pending = (
        OutboxMessage.objects.filter(published_at__isnull=True)
        .exclude(claimed_until__gt=now)
        .order_by("created_at", "pk")
        .values_list("pk", flat=True)[:limit]
    )
    published = publish(list(pending), now=now)
    OutboxMessage.objects.filter(published_at__lt=now - KEEP_PUBLISHED).delete()
    return published
