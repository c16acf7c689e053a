"""Thin Celery tasks: they take ids and call one service."""

from celery import shared_task

from . import services


@shared_task(acks_late=True, autoretry_for=(OSError,), retry_backoff=True, max_retries=8)
def order_paid(order_id: int) -> bool:
    return services.order_paid_notify(order_id=order_id)
