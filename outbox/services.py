"""Writing events to the outbox and handing them to their handlers after the commit.

`outbox_emit` is called inside the transaction that changes the state the event describes:
the event commits with the change or not at all. The events of one transaction are dispatched
by ONE task published after its commit, whatever their number and the number of calls that
wrote them: the first event of a transaction writes one `outbox.tasks.outbox_dispatch_batch`
message (outbox.messages.enqueue_once_per_transaction) whose argument every event of the
transaction carries (`dispatch_batch`); the task dispatches those events. Seen before: a scan
that stored 500 transfers published 500 tasks, 63 % of the scan's time (bench/watcher.py).

A dispatch lost with a worker or a broker message is done again by `outbox_dispatch_pending`
(the outbox's own beat task, `outbox.tasks.outbox_redispatch`, every minute), and
`outbox_dispatch` does each event once whatever the number of calls (row lock +
`dispatched_at`).
"""

import json
import logging
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from .locks import lock_pending_event
from .messages import enqueue_once_per_transaction
from .models import OutboxEvent

logger = logging.getLogger(__name__)

DISPATCH_BATCH_TASK = "outbox.tasks.outbox_dispatch_batch"


def _account_id(account) -> int:
    return account if isinstance(account, int) else account.pk


def outbox_emit(
    *, event_type: str, account, payload: dict, once_key: str | None = None
) -> OutboxEvent | None:
    """Write one event for `account` (a user or its id) and queue its dispatch after the
    commit. Callable inside any transaction (also outside one: then it commits at once).

    With `once_key`, an event with that key already written means nothing is written (None)."""
    with transaction.atomic():
        fields = {
            "event_type": event_type,
            "account_id": _account_id(account),
            "payload": payload,
            "once_key": once_key,
            "dispatch_batch": enqueue_once_per_transaction(DISPATCH_BATCH_TASK),
        }
        if once_key is None:
            return OutboxEvent.objects.create(**fields)
        try:
            with transaction.atomic():  # a savepoint: the duplicate leaves the caller's work
                return OutboxEvent.objects.create(**fields)
        except IntegrityError:
            return None


def outbox_record(*, event_type: str, account, payload: dict) -> OutboxEvent:
    """An event written for the account's event list and sent by its caller alone (a
    webhook ping to one endpoint): handed to no handler, so dispatched at once."""
    return OutboxEvent.objects.create(
        event_type=event_type,
        account_id=_account_id(account),
        payload=payload,
        dispatched_at=timezone.now(),
    )


def outbox_emit_many(events: Iterable[tuple[str, object, dict]]) -> list[int]:
    """`outbox_emit` for many events at once: one INSERT whatever their number, and with the
    transaction's other events one dispatch after the commit; the events' primary keys.

    On PostgreSQL the events go in as ONE parameter, a JSON array of rows unpacked by the
    server (as payments.bulk does), their ids drawn there: no model instance, no uuid and no
    quoted array element per event in Python (a scan writes 500; bench/watcher.py)."""
    rows = [(event_type, _account_id(account), payload) for event_type, account, payload in events]
    if not rows:
        return []
    # In the caller's transaction, without a savepoint of its own (two statements less).
    with transaction.atomic(savepoint=False):
        batch = enqueue_once_per_transaction(DISPATCH_BATCH_TASK)
        if connection.vendor != "postgresql":
            created = OutboxEvent.objects.bulk_create(
                [
                    OutboxEvent(
                        event_type=event_type,
                        account_id=account_id,
                        payload=json.loads(json.dumps(payload, cls=DjangoJSONEncoder)),
                        dispatch_batch=batch,
                    )
                    for event_type, account_id, payload in rows
                ]
            )
            return [event.pk for event in created]
        table = OutboxEvent._meta.db_table
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table} (event_id, event_type, account_id, payload, created_at,"  # noqa: S608
                " dispatch_batch) SELECT gen_random_uuid(), r.v->>0, (r.v->>1)::bigint, r.v->2,"
                " %s, %s FROM jsonb_array_elements(%s::jsonb) WITH ORDINALITY AS r(v, n)"
                " ORDER BY r.n RETURNING id",
                [
                    timezone.now(),
                    uuid.UUID(batch),
                    json.dumps(rows, cls=DjangoJSONEncoder, separators=(",", ":")),
                ],
            )
            return [pk for (pk,) in cursor.fetchall()]


def handlers() -> Sequence:
    return [import_string(path) for path in settings.OUTBOX_HANDLERS]


def outbox_dispatch(*, event_pk: int) -> bool:
    """Hand one event to every handler, once; True when it was dispatched now.

    The handlers run in this transaction, under the event's row lock: they write what they
    need (delivery rows) and queue their own tasks on commit. A second call waits for the
    first, then finds `dispatched_at` set and does nothing.
    """
    with transaction.atomic():
        event = lock_pending_event(event_pk)
        if event is None:
            return False
        for handler in handlers():
            handler(event)
        event.dispatched_at = timezone.now()
        event.save(update_fields=["dispatched_at"])
    return True


def outbox_dispatch_batch(*, batch: str) -> list[int]:
    """Dispatch the events written with this batch (one transaction's: `outbox_emit_many`)
    that are not dispatched yet, each in a transaction of its own as `outbox_dispatch`; the pks
    dispatched now. A handler raising for one event leaves that one pending and the others go
    on; the first error is raised at the end (the task's retry, or the beat's re-dispatch)."""
    pending = (
        OutboxEvent.objects.filter(dispatch_batch=batch, dispatched_at__isnull=True)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    dispatched, failure = [], None
    for pk in list(pending):
        try:
            if outbox_dispatch(event_pk=pk):
                dispatched.append(pk)
        except Exception as exc:
            failure = failure or exc
            logger.exception(
                "outbox event %s: a handler failed; left pending",
                pk,
                extra={"event": "outbox_dispatch_failed", "outbox_event_pk": pk},
            )
    if failure is not None:
        raise failure
    return dispatched


# An event is queued for dispatch at its commit; the re-dispatch takes only those older than this,
# so it does not race every fresh dispatch.
DISPATCH_GRACE = timedelta(seconds=30)


def outbox_dispatch_pending(*, now: datetime | None = None, limit: int = 500) -> list[int]:
    """Dispatch the events never dispatched (a lost task, a worker killed before it ran);
    the pks dispatched now. A handler raising for one event rolls back that event's dispatch
    alone: it is logged, left pending (tried again at the next call) and the others go on."""
    now = now or timezone.now()
    pending = (
        OutboxEvent.objects.filter(dispatched_at__isnull=True, created_at__lte=now - DISPATCH_GRACE)
        .order_by("created_at", "pk")
        .values_list("pk", "event_id")[:limit]
    )
    dispatched = []
    for pk, event_id in list(pending):
        try:
            if outbox_dispatch(event_pk=pk):
                dispatched.append(pk)
        except Exception:
            logger.exception(
                "outbox event %s: a handler failed; left pending",
                event_id,
                extra={"event": "outbox_dispatch_failed", "outbox_event": str(event_id)},
            )
    return dispatched
