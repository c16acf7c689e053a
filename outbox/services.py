"""Writing events to the outbox and handing them to their handlers after the commit.

`outbox_emit` is called inside the transaction that changes the state the event describes:
the event commits with the change or not at all. The dispatch is queued after the commit; a
dispatch lost with a worker or a broker message is done again by `outbox_dispatch_pending`
(the outbox's own beat task, `outbox.tasks.outbox_redispatch`, every minute), and
`outbox_dispatch` does each event once whatever the number of calls (row lock +
`dispatched_at`).
"""

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from .locks import lock_pending_event
from .messages import enqueue, enqueue_many
from .models import OutboxEvent

logger = logging.getLogger(__name__)


def _account_id(account) -> int:
    return account if isinstance(account, int) else account.pk


def outbox_emit(
    *, event_type: str, account, payload: dict, once_key: str | None = None
) -> OutboxEvent | None:
    """Write one event for `account` (a user or its id) and queue its dispatch after the
    commit. Callable inside any transaction (also outside one: then it commits at once).

    With `once_key`, an event with that key already written means nothing is written (None)."""
    if once_key is None:
        (event,) = outbox_emit_many([(event_type, account, payload)])
        return event

    try:
        with transaction.atomic():  # a savepoint: the duplicate leaves the caller's work alone
            event = OutboxEvent.objects.create(
                event_type=event_type,
                account_id=_account_id(account),
                payload=payload,
                once_key=once_key,
            )
    except IntegrityError:
        return None
    enqueue("outbox.tasks.outbox_dispatch", event.pk)
    return event


def outbox_record(*, event_type: str, account, payload: dict) -> OutboxEvent:
    """An event written for the account's event list and sent by its caller alone (a
    webhook ping to one endpoint): handed to no handler, so dispatched at once."""
    return OutboxEvent.objects.create(
        event_type=event_type,
        account_id=_account_id(account),
        payload=payload,
        dispatched_at=timezone.now(),
    )


def outbox_emit_many(events: Iterable[tuple[str, object, dict]]) -> list[OutboxEvent]:
    """`outbox_emit` for many events at once: one INSERT whatever their number."""

    rows = [
        OutboxEvent(event_type=event_type, account_id=_account_id(account), payload=payload)
        for event_type, account, payload in events
    ]
    if not rows:
        return []
    with transaction.atomic():
        created = OutboxEvent.objects.bulk_create(rows)
        enqueue_many("outbox.tasks.outbox_dispatch", [(event.pk,) for event in created])
    return created


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
