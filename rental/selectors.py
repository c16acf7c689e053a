"""Reads of the rental domain shared by views and other apps."""

from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet

from accounts.models import User

from . import capacity
from .models import CardAllocation, GpuModel, LotPrice, Order, OrderStatus, OrderStatusChange
from .readiness import host_port


def catalogue() -> list[GpuModel]:
    """Active GPU models with their lot prices and `lots_available` from the hosts (four
    queries, whatever the size)."""
    models = list(
        GpuModel.objects.filter(active=True).prefetch_related(
            Prefetch("lot_prices", queryset=LotPrice.objects.order_by("duration_days"))
        )
    )
    available = capacity.lots_available(models)
    for model in models:
        model.lots_available = available[model.pk]
    return models


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


@dataclass(frozen=True, slots=True)
class HostAccess:
    """How the customer reaches one host of the order, and which of its cards are theirs."""

    host_name: str
    ssh_host: str
    ssh_port: int
    ssh_user: str
    cards: tuple[int, ...]  # card numbers on that host, from 1

    @property
    def ssh_endpoint(self) -> str:
        return f"{self.ssh_user}@{host_port(self.ssh_host, self.ssh_port)}"

    @property
    def ssh_command(self) -> str:
        port = "" if self.ssh_port == 22 else f"-p {self.ssh_port} "
        return f"ssh {port}{self.ssh_user}@{self.ssh_host}"


def order_access(order: Order) -> list[HostAccess]:
    """Per host of the order's cards (live, or those it had once ended), by host name."""
    by_host: dict[int, list[CardAllocation]] = {}
    allocations = CardAllocation.objects.filter(order=order).select_related("host")
    if order.status != OrderStatus.ENDED:
        allocations = allocations.filter(released_at__isnull=True)
    for allocation in allocations.order_by("host__name", "card_index"):
        by_host.setdefault(allocation.host_id, []).append(allocation)
    return [
        HostAccess(
            host_name=cards[0].host.name,
            ssh_host=cards[0].host.ssh_host,
            ssh_port=cards[0].host.ssh_port,
            ssh_user=cards[0].host.ssh_user,
            cards=tuple(card.card_index + 1 for card in cards),
        )
        for cards in by_host.values()
    ]
