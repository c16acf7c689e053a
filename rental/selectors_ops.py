"""Reads for the operators' pages: hosts and their cards, the provisioning queue, one order.

Every read runs a fixed number of queries whatever the number of rows.
"""

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, OuterRef, Prefetch, Q, QuerySet, Subquery

from accounts.ssh_keys import stored_ssh_key

from .models import (
    CardAllocation,
    Host,
    Order,
    OrderStatus,
    OrderStatusChange,
    ProvisioningIssue,
    ProvisioningIssueEvent,
)
from .selectors import HostAccess, order_access

LIVE = Q(allocations__released_at__isnull=True)

# ------------------------------------------------------------------------------ hosts


def ops_hosts() -> list[Host]:
    """Every host with its model, `rented` (live allocations) and `free` cards (one query)."""
    hosts = list(
        Host.objects.select_related("gpu_model")
        .annotate(rented=Count("allocations", filter=LIVE))
        .order_by("name", "pk")
    )
    for host in hosts:
        host.free = max(0, host.cards - host.rented)
    return hosts


def ops_host(*, host_id: int) -> Host:
    """One host; a missing id raises Host.DoesNotExist."""
    return Host.objects.select_related("gpu_model").get(pk=host_id)


def host_orders(*, host_id: int) -> list[Order]:
    """The orders holding live cards of this host, each with `cards_here` (one query)."""
    return list(
        Order.objects.filter(allocations__host_id=host_id, allocations__released_at__isnull=True)
        .annotate(cards_here=Count("allocations"))
        .select_related("customer")
        .order_by("pk")
    )


# ------------------------------------------------------------------- provisioning queue


@dataclass(frozen=True, slots=True)
class HostCards:
    name: str
    cards: int


@dataclass(frozen=True, slots=True)
class QueueRow:
    order: Order
    hosts: list[HostCards]
    paid_at: datetime | None

    @property
    def ssh_key_type(self) -> str:
        """The key's type (ssh-ed25519...), or "" while the customer has given none."""
        key = stored_ssh_key(self.order.ssh_public_key)
        return key.key_type if key else ""


@dataclass(frozen=True, slots=True)
class ProvisioningQueue:
    waiting_for_cards: list[QueueRow]
    to_prepare: list[QueueRow]
    checking: list[QueueRow]
    ssh_failed: list[QueueRow]
    active: list[QueueRow]
    # Active rentals whose customer's diagnostics report differs from the order (also listed
    # among the active rentals).
    handover_problems: list[QueueRow]


def _host_cards(order: Order) -> list[HostCards]:
    """Names of the hosts holding the order's live cards (prefetched), with how many each."""
    per_host = Counter(allocation.host.name for allocation in order.live_allocations)
    return [HostCards(name, cards) for name, cards in sorted(per_host.items())]


def _queue_orders() -> QuerySet[Order]:
    paid_at = (
        OrderStatusChange.objects.filter(order=OuterRef("pk"), to_status=OrderStatus.PAID)
        .order_by("-created_at", "-pk")
        .values("created_at")[:1]
    )
    live = CardAllocation.objects.filter(released_at__isnull=True).select_related("host")
    return (
        Order.objects.filter(
            Q(status=OrderStatus.PAID, provisioning_issue=ProvisioningIssue.CAPACITY)
            | Q(status__in=(OrderStatus.PROVISIONING, OrderStatus.ACTIVE))
        )
        .select_related("customer")
        .annotate(paid_at=Subquery(paid_at))
        .prefetch_related(Prefetch("allocations", queryset=live, to_attr="live_allocations"))
    )


def provisioning_queue() -> ProvisioningQueue:
    """Six lists from two queries (the orders, then their live cards with their hosts):
    paid orders waiting for cards, orders to prepare, orders whose SSH is being checked,
    those whose SSH did not answer, the active rentals ending first, and those of them with a
    handover problem."""
    queue = ProvisioningQueue([], [], [], [], [], [])
    for order in _queue_orders().order_by("created_at", "pk"):
        row = QueueRow(order=order, hosts=_host_cards(order), paid_at=order.paid_at)
        if order.status == OrderStatus.PAID:
            queue.waiting_for_cards.append(row)
        elif order.status == OrderStatus.ACTIVE:
            queue.active.append(row)
            if order.provisioning_issue == ProvisioningIssue.HANDOVER:
                queue.handover_problems.append(row)
        elif order.provisioning_issue == ProvisioningIssue.READINESS:
            queue.ssh_failed.append(row)
        elif order.prepared_at is None:
            queue.to_prepare.append(row)
        else:
            queue.checking.append(row)
    queue.waiting_for_cards.sort(key=lambda row: (row.paid_at is None, row.paid_at or 0))
    queue.active.sort(key=lambda row: (row.order.ends_at, row.order.pk))
    return queue


# ------------------------------------------------------------------------- one order


@dataclass(frozen=True, slots=True)
class OpsOrderDetail:
    order: Order
    access: list[HostAccess]
    ssh_key_fingerprint: str
    status_changes: list[OrderStatusChange]
    issue_events: list[ProvisioningIssueEvent]

    @property
    def history(self) -> list[OrderStatusChange | ProvisioningIssueEvent]:
        """Status changes and issue events (a handover problem raised, resolved) in time
        order."""
        entries = [*self.status_changes, *self.issue_events]
        return sorted(entries, key=lambda entry: entry.created_at)

    @property
    def can_resolve_handover(self) -> bool:
        return self.order.provisioning_issue == ProvisioningIssue.HANDOVER

    @property
    def can_prepare(self) -> bool:
        """Marking prepared applies before the first mark, and again once SSH failed."""
        order = self.order
        return order.status == OrderStatus.PROVISIONING and (
            order.prepared_at is None or order.provisioning_issue == ProvisioningIssue.READINESS
        )

    @property
    def can_allocate(self) -> bool:
        return (
            self.order.status == OrderStatus.PAID
            and self.order.provisioning_issue == ProvisioningIssue.CAPACITY
        )

    @property
    def can_recheck(self) -> bool:
        """Only once the worker gave up: while it still checks, a second chain would halve
        the time before giving up."""
        return (
            self.order.status == OrderStatus.PROVISIONING
            and self.order.provisioning_issue == ProvisioningIssue.READINESS
        )


def ops_order(*, order_id: int) -> OpsOrderDetail:
    """The order with its customer, who prepared it, its cards per host and its timeline of
    status changes and issue events (four queries); a missing id raises Order.DoesNotExist."""
    order = (
        Order.objects.select_related("customer", "prepared_by")
        .prefetch_related(
            Prefetch(
                "status_changes",
                queryset=OrderStatusChange.objects.select_related("actor").order_by(
                    "created_at", "pk"
                ),
            ),
            Prefetch(
                "issue_events",
                queryset=ProvisioningIssueEvent.objects.select_related("actor").order_by(
                    "created_at", "pk"
                ),
            ),
        )
        .get(pk=order_id)
    )
    return OpsOrderDetail(
        order=order,
        access=order_access(order),
        ssh_key_fingerprint=getattr(stored_ssh_key(order.ssh_public_key), "fingerprint", ""),
        status_changes=list(order.status_changes.all()),
        issue_events=list(order.issue_events.all()),
    )
