"""Row locks of the outbox. An event is locked alone, by its own dispatch transaction, before
the rows its handlers lock (webhook endpoints, then deliveries: api.webhooks.locks); the
transactions that write events lock none (see the house's lock order in rental.locks)."""

from .models import OutboxEvent


def lock_pending_event(event_pk: int) -> OutboxEvent | None:
    """The event, locked, unless it is missing or already dispatched."""
    return (
        OutboxEvent.objects.select_for_update(of=("self",))
        .filter(pk=event_pk, dispatched_at__isnull=True)
        .first()
    )
