"""Reads of the rental domain shared by views and other apps."""

from django.db.models import Prefetch, QuerySet

from accounts.models import User

from .models import GpuModel, LotPrice, Order, OrderStatusChange


def catalogue() -> QuerySet[GpuModel]:
    """Active GPU models with their lot prices (two queries, whatever the size)."""
    return GpuModel.objects.filter(active=True).prefetch_related(
        Prefetch("lot_prices", queryset=LotPrice.objects.order_by("duration_days"))
    )


def customer_orders(*, customer: User) -> QuerySet[Order]:
    """The customer's orders, newest first; the snapshot makes joins unnecessary."""
    return Order.objects.filter(customer=customer).order_by("-created_at", "-pk")


def customer_order(*, customer: User, order_id: int) -> Order:
    """The customer's own order with its timeline; another customer's raises DoesNotExist."""
    return (
        Order.objects.filter(customer=customer)
        .prefetch_related(
            Prefetch(
                "status_changes", queryset=OrderStatusChange.objects.order_by("created_at", "pk")
            )
        )
        .get(pk=order_id)
    )
