"""Reads of the rental domain shared by views and other apps."""

from dataclasses import dataclass
from datetime import datetime
from functools import cache

from django.db import connection
from django.db.models import Count, F, FilteredRelation, Prefetch, Q, QuerySet

from accounts.models import User
from accounts.statements import CompiledPages, CompiledQuery

from . import capacity
from .hosts.models import WORKING_STATUSES, TenancyStatus
from .models import (
    CardAllocation,
    GpuModel,
    HostManagement,
    LotPrice,
    Order,
    OrderStatus,
    OrderStatusChange,
    Preparation,
)
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


_ANY_CUSTOMER_ID, _ANY_ORDER_ID = -7_927, -7_933  # stand for the ids while compiling


@cache
def _customer_orders_queries() -> tuple[CompiledQuery, CompiledQuery]:
    """customer_orders' statement and how many rows it has: compiled once per process."""
    orders = Order.objects.filter(customer_id=_ANY_CUSTOMER_ID).order_by("-created_at", "-pk")
    count = (
        Order.objects.filter(customer_id=_ANY_CUSTOMER_ID)
        .values("customer_id")
        .annotate(orders=Count("pk"))
        .values_list("orders")
        .order_by()
    )
    return (
        CompiledQuery(orders, customer=_ANY_CUSTOMER_ID),
        CompiledQuery(count, customer=_ANY_CUSTOMER_ID),
    )


def customer_order_pages(*, customer: User) -> CompiledPages:
    """customer_orders for a Paginator (the order list page): its count and each page's rows
    read by statements compiled once per process."""
    orders, count = _customer_orders_queries()

    def counted() -> int:
        rows = count.values(customer=customer.pk)
        return rows[0][0] if rows else 0

    return CompiledPages(orders, count=counted, customer=customer.pk)


@cache
def _customer_order_queries() -> tuple[CompiledQuery, CompiledQuery]:
    """The order's row and its status changes (oldest first): the ORM's statements, compiled
    once per process (as accounts.auth_backends does for the user; compiling them cost the
    order page more than PostgreSQL takes to run them)."""
    order = Order.objects.filter(customer_id=_ANY_CUSTOMER_ID, pk=_ANY_ORDER_ID)
    changes = OrderStatusChange.objects.filter(order_id=_ANY_ORDER_ID).order_by("created_at", "pk")
    return (
        CompiledQuery(order, customer=_ANY_CUSTOMER_ID, order=_ANY_ORDER_ID),
        CompiledQuery(changes, order=_ANY_ORDER_ID),
    )


def customer_order(*, customer: User, order_id: int) -> Order:
    """The customer's own order with its timeline; another customer's raises DoesNotExist."""
    low, high = connection.ops.integer_field_range(Order._meta.pk.get_internal_type())
    if not low <= order_id <= high:  # no such row (the ORM's filter finds none either)
        raise Order.DoesNotExist("No such order of this customer.")
    order_query, changes_query = _customer_order_queries()
    order = next(iter(order_query.objects(customer=customer.pk, order=order_id)), None)
    if order is None:
        raise Order.DoesNotExist("No such order of this customer.")
    changes = changes_query.objects(order=order_id)
    for change in changes:
        change.order = order
    # As prefetch_related leaves them: order.status_changes.all() reads these, no query.
    prefetched = order.status_changes.all()
    prefetched._result_cache, prefetched._prefetch_done = changes, True
    order._prefetched_objects_cache = {"status_changes": prefetched}
    return order


# What the customer is told of the preparation on one host (HostAccess.preparation_source).
PREPARED_NOTHING_MORE = "nothing_more"  # Ubuntu: nothing installed beyond the host's system
PREPARED_BY_STEPS = "steps"  # PyTorch/Blender: the worker ran the steps defined for it
PREPARED_BY_OPERATORS = "operators"  # by hand: a host prepared by hand, or no steps defined
PREPARED_CUSTOM = "custom"  # Custom: our operators' step, as the customer described it


@dataclass(frozen=True, slots=True)
class HostAccess:
    """How the customer reaches one host of the order, which of its cards are theirs, and
    where that host's access stands (its tenancy, rental.hosts.models.Tenancy).

    `ssh_user` is the tenant's own account on a worker-managed host, the host's shared
    `ssh_user` on a host operators prepare by hand. `state` is the tenancy's status; empty for
    cards allocated before tenancies existed (nothing is known, nothing is claimed)."""

    host_name: str
    ssh_host: str
    ssh_port: int
    ssh_user: str
    cards: tuple[int, ...]  # card numbers on that host, from 1
    state: str = ""
    worker_managed: bool = False
    preparation_source: str = ""
    waits_for_operator: bool = False  # the worker waits for an operator's preparation step
    cards_verified: tuple[int, ...] = ()  # the cards the tenant saw when we logged in as it
    ready_at: datetime | None = None
    revoke_started_at: datetime | None = None
    erased_at: datetime | None = None  # verified (worker) or confirmed item by item (by hand)
    changed_at: datetime | None = None  # the tenancy's last change (status_version)

    @property
    def ssh_endpoint(self) -> str:
        return f"{self.ssh_user}@{host_port(self.ssh_host, self.ssh_port)}"

    @property
    def ssh_command(self) -> str:
        port = "" if self.ssh_port == 22 else f"-p {self.ssh_port} "
        return f"ssh {port}{self.ssh_user}@{self.ssh_host}"

    @property
    def state_label(self) -> str:
        return TenancyStatus(self.state).label if self.state else ""

    @property
    def is_working(self) -> bool:
        """The worker is doing something on the host now (the page keeps asking)."""
        return self.worker_managed and self.state in WORKING_STATUSES


def _preparation_source(order: Order, *, preparation_applied: bool, worker: bool) -> str:
    """Who prepared what on the host: the worker installs nothing for Ubuntu and runs the
    steps defined for PyTorch and Blender (`preparation_applied`); operators do the rest by
    hand (Custom, a preparation without steps, every host prepared by hand)."""
    if order.preparation == Preparation.CUSTOM:
        return PREPARED_CUSTOM
    if not worker:
        return PREPARED_BY_OPERATORS
    if order.preparation == Preparation.UBUNTU:
        return PREPARED_NOTHING_MORE
    if preparation_applied:
        return PREPARED_BY_STEPS
    return PREPARED_BY_OPERATORS


# A card allocation's host's tenancy for the same order (one per order and host).
_TENANCY_FIELDS = {
    "t_status": "status",
    "t_account": "account",
    "t_preparation_applied": "preparation_applied",
    "t_operator_step": "operator_step",
    "t_cards_verified": "cards_verified",
    "t_ready_at": "ready_at",
    "t_revoke_started_at": "revoke_started_at",
    "t_erased_at": "erased_at",
    "t_updated_at": "updated_at",
}


def _verified_cards(cards_verified) -> tuple[int, ...]:
    return tuple(
        sorted(
            card["index"] + 1
            for card in cards_verified or []
            if isinstance(card, dict) and isinstance(card.get("index"), int)
        )
    )


def _host_access(order: Order, cards: list[CardAllocation]) -> HostAccess:
    first = cards[0]
    host = first.host
    numbers = tuple(card.card_index + 1 for card in cards)
    if first.t_status is None:  # cards allocated before tenancies existed: nothing is known
        return HostAccess(
            host_name=host.name,
            ssh_host=host.ssh_host,
            ssh_port=host.ssh_port,
            ssh_user=host.ssh_user,
            cards=numbers,
        )
    worker = host.management == HostManagement.WORKER
    return HostAccess(
        host_name=host.name,
        ssh_host=host.ssh_host,
        ssh_port=host.ssh_port,
        ssh_user=first.t_account if worker else host.ssh_user,
        cards=numbers,
        state=first.t_status,
        worker_managed=worker,
        preparation_source=_preparation_source(
            order, preparation_applied=first.t_preparation_applied, worker=worker
        ),
        waits_for_operator=worker and first.t_operator_step,
        cards_verified=_verified_cards(first.t_cards_verified),
        ready_at=first.t_ready_at,
        revoke_started_at=first.t_revoke_started_at,
        erased_at=first.t_erased_at,
        changed_at=first.t_updated_at,
    )


def order_access(order: Order) -> list[HostAccess]:
    """Per host of the order's cards (live, or every one it had once ended), by host name,
    with the host's access state from its tenancy: the one read the order page, its status
    polling, the emails, the API, the webhooks and the operators' page share. One query,
    whatever the number of hosts and cards."""
    allocations = (
        CardAllocation.objects.filter(order=order)
        .annotate(
            tenancy=FilteredRelation(
                "host__tenancies", condition=Q(host__tenancies__order=F("order"))
            ),
            **{name: F(f"tenancy__{field}") for name, field in _TENANCY_FIELDS.items()},
        )
        .select_related("host")
    )
    if order.status != OrderStatus.ENDED:
        allocations = allocations.filter(released_at__isnull=True)
    by_host: dict[int, list[CardAllocation]] = {}
    for allocation in allocations.order_by("host__name", "card_index"):
        by_host.setdefault(allocation.host_id, []).append(allocation)
    return [_host_access(order, cards) for cards in by_host.values()]


def access_version(access: list[HostAccess]) -> str:
    """Changes whenever a host's access changes (status, or anything else of its tenancy)."""
    return ",".join(
        f"{host.state}@{host.changed_at.timestamp():.6f}" if host.changed_at else host.state
        for host in access
    )
