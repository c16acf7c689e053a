"""Row locks of the outbox. An event is locked alone, by its own dispatch transaction, before
the rows its handlers lock (webhook endpoints, then deliveries: api.webhooks.locks); the
transactions that write events lock none (see the house's lock order in rental.locks)."""

from .models import OutboxEvent, OutboxMessage


def lock_pending_event(event_pk: int) -> OutboxEvent | None:
    """The event, locked, unless it is missing or already dispatched."""
    return (
        OutboxEvent.objects.select_for_update(of=("self",), no_key=True)
        .filter(pk=event_pk, dispatched_at__isnull=True)
        .first()
    )


def lock_unclaimed_messages(message_ids, now) -> list[OutboxMessage]:
    """The unpublished, unclaimed messages among these, locked in primary-key order; rows
    another publisher is claiming right now are skipped, not waited for."""
    return list(
        OutboxMessage.objects.select_for_update(skip_locked=True, no_key=True)
        .filter(pk__in=sorted(set(message_ids)), published_at__isnull=True)
        .exclude(claimed_until__gt=now)
        .order_by("pk")
    )
