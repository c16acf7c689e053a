from celery import shared_task

from .idempotency import idempotency_keys_purge


@shared_task(acks_late=True, reject_on_worker_lost=True)
def purge_idempotency_keys() -> int:
    """Idempotency keys are kept 24 hours (beat, hourly)."""
    return idempotency_keys_purge()
