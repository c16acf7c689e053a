"""Thin Celery tasks of the chain: the watcher's scans. Names stay `payments.tasks.<name>`
(beat schedule, routes, messages already queued)."""

from celery import shared_task
from django.conf import settings

from . import scanning
from .networks import enabled_networks
from .rpc import RpcError


@shared_task(name="payments.tasks.scan_all_networks", acks_late=True)
def scan_all_networks() -> list[str]:
    """Celery beat, every few seconds: one scan task per enabled network."""
    keys = list(enabled_networks())
    for key in keys:
        scan_network.apply_async(args=[key], expires=settings.PAYMENT_SCAN_INTERVAL_SECONDS * 3)
    return keys


@shared_task(
    name="payments.tasks.scan_network",
    acks_late=True,
    autoretry_for=(RpcError,),
    retry_backoff=2,  # 2, 4, 8, 16, 32 s: one scan task per network, no herd to spread
    retry_backoff_max=60,
    retry_jitter=False,
    max_retries=5,
)
def scan_network(network_key: str) -> dict:
    report = scanning.scan_network(network_key=network_key)
    return {"stored": report.stored, "confirmed": report.confirmed, "reorged": report.reorged}


@shared_task(
    name="payments.tasks.payment_check",
    acks_late=True,
    autoretry_for=(RpcError,),
    retry_backoff=2,
    retry_backoff_max=120,
    retry_jitter=False,
    max_retries=8,
)
def payment_check(payment_id: int) -> int:
    """The customer declared a payment: look now."""
    return scanning.payment_check(payment_id=payment_id).stored
