"""Thin Celery tasks over outbox.services."""

from celery import shared_task

from . import messages, services


@shared_task(acks_late=True, autoretry_for=(OSError,), retry_backoff=True, max_retries=8)
def outbox_dispatch(event_pk: int) -> bool:
    """Hand one committed event to its handlers (once; a repeat does nothing)."""
    return services.outbox_dispatch(event_pk=event_pk)


@shared_task(acks_late=True, autoretry_for=(OSError,), retry_backoff=True, max_retries=8)
def outbox_dispatch_batch(batch: str) -> list[int]:
    """Hand the events of one commit (its dispatch batch) to their handlers, each once."""
    return services.outbox_dispatch_batch(batch=batch)


@shared_task(acks_late=True)
def outbox_redispatch() -> list[int]:
    """Celery beat, every minute: dispatch the events whose dispatch was lost (a broker
    message lost, a worker killed before it ran); the pks dispatched now."""
    return services.outbox_dispatch_pending()


@shared_task(acks_late=True)
def outbox_relay() -> list[int]:
    """Celery beat, every OUTBOX_RELAY_SECONDS: publish the messages whose publishing after
    their commit failed (a broker down, a web process killed); the ids published now."""
    return messages.publish_pending()
