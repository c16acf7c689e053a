"""Reads for the operators' pages: hosts and their cards, the fleet card by card, the
provisioning and teardown queues, one order.

Every read runs a fixed number of queries whatever the number of rows.
"""

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from django.db import models
from django.db.models import Count, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.ssh_keys import stored_ssh_key

from .hosts import engine
from .hosts.models import Tenancy, TenancyStatus, TenancyStep
from .models import (
    HOST_TRANSITIONS,
    CardAllocation,
    Host,
    HostState,
    HostStateChange,
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


# A worker-managed host in these states is made available by a passing host check (a
# registration, a return after repair); an available or draining one keeps its state.
RETURNED_BY_CHECK = frozenset(
    {HostState.UNCHECKED, HostState.OUT_OF_SERVICE, HostState.MAINTENANCE}
)
HOST_HISTORY_LENGTH = 10


def key_fingerprint(host_key: str) -> str:
    """SHA256:... of a stored host key; "" when there is none or it cannot be read."""
    if not host_key:
        return ""
    try:
        return engine.fingerprint(host_key)
    except (ValueError, IndexError):  # binascii.Error is a ValueError
        return ""


def host_check_refusal(host: Host) -> str:
    """Why the worker cannot run the host check now ("" when it can): the same rules as
    rental.hosts.services.host_check, told before the check is queued."""
    if not host.worker_managed:
        return gettext("The worker cannot check a host that operators prepare by hand.")
    if not host.admin_user:
        return gettext("Give the host an administrative user first.")
    if host.state == HostState.HOST_KEY_CHANGED:
        return gettext("The host key changed: confirm a key first.")
    if not host.host_key:
        return gettext("Confirm the host key first.")
    return ""


@dataclass(frozen=True, slots=True)
class OpsHostDetail:
    host: Host
    orders: list[Order]
    state_changes: list[HostStateChange]  # the last HOST_HISTORY_LENGTH, newest first

    @property
    def offered_fingerprint(self) -> str:
        return key_fingerprint(self.host.host_key_offered)

    @property
    def pinned_fingerprint(self) -> str:
        return key_fingerprint(self.host.host_key)

    @property
    def can_fetch_key(self) -> bool:
        return self.host.worker_managed

    @property
    def can_confirm_key(self) -> bool:
        """A key was offered that is not the pinned one (a new host, a changed key)."""
        host = self.host
        return (
            host.worker_managed
            and bool(host.host_key_offered)
            and (host.host_key_offered != host.host_key or host.state == HostState.HOST_KEY_CHANGED)
        )

    @property
    def check_refusal(self) -> str:
        return host_check_refusal(self.host)

    @property
    def check_makes_available(self) -> bool:
        return self.host.state in RETURNED_BY_CHECK

    @property
    def can_drain(self) -> bool:
        return HostState.DRAINING in HOST_TRANSITIONS[self.host.state]

    @property
    def can_set_maintenance(self) -> bool:
        return HostState.MAINTENANCE in HOST_TRANSITIONS[self.host.state]

    @property
    def can_return(self) -> bool:
        """Hosts prepared by hand return on an operator's word; worker-managed ones only
        through a passing host check."""
        return (
            not self.host.worker_managed
            and HostState.AVAILABLE in HOST_TRANSITIONS[self.host.state]
        )


def ops_host_detail(*, host_id: int) -> OpsHostDetail:
    """The host with its model, the orders holding its cards and its last state changes
    (three queries); a missing id raises Host.DoesNotExist."""
    host = ops_host(host_id=host_id)
    changes = list(
        HostStateChange.objects.filter(host=host)
        .select_related("actor")
        .order_by("-created_at", "-pk")[:HOST_HISTORY_LENGTH]
    )
    return OpsHostDetail(host=host, orders=host_orders(host_id=host_id), state_changes=changes)


# ------------------------------------------------------------------------------ fleet


class CardState(models.TextChoices):
    FREE = "free", _("Free")
    ALLOCATED = "allocated", _("Allocated")
    REVOKING = "revoking", _("Being revoked")
    QUARANTINED = "quarantined", _("Quarantined")
    # Not allocated, and its host sells no card now (not checked, draining, maintenance...).
    UNAVAILABLE = "unavailable", _("Not for sale")


@dataclass(frozen=True, slots=True)
class FleetCard:
    index: int  # as the vendor tool numbers the host's cards, from 0
    state: str  # a CardState
    allocation: CardAllocation | None
    tenancy: Tenancy | None

    @property
    def state_label(self) -> str:
        return CardState(self.state).label

    @property
    def order(self) -> Order | None:
        return self.allocation.order if self.allocation else None


@dataclass(frozen=True, slots=True)
class FleetHost:
    host: Host
    cards: list[FleetCard]


@dataclass(frozen=True, slots=True)
class StateCount:
    state: str
    label: str
    count: int


@dataclass(frozen=True, slots=True)
class Fleet:
    hosts: list[FleetHost]
    card_counts: list[StateCount]
    host_counts: list[StateCount]

    @property
    def total_cards(self) -> int:
        return sum(count.count for count in self.card_counts)


def _card_state(host: Host, allocation: CardAllocation | None, tenancy: Tenancy | None) -> str:
    if allocation is None:
        return CardState.FREE if host.state == HostState.AVAILABLE else CardState.UNAVAILABLE
    if tenancy is not None and tenancy.status == TenancyStatus.REVOKING:
        return CardState.REVOKING
    if tenancy is not None and tenancy.status == TenancyStatus.QUARANTINED:
        return CardState.QUARANTINED
    return CardState.ALLOCATED


def fleet() -> Fleet:
    """Every host card by card: free, allocated (its order and tenancy), being revoked,
    quarantined, or not for sale with its host's state; counts per state. Three queries:
    the hosts with their models, the live allocations with their orders, the tenancies not
    erased."""
    live = CardAllocation.objects.filter(released_at__isnull=True).select_related("order")
    open_tenancies = Tenancy.objects.exclude(status=TenancyStatus.ERASED).order_by("pk")
    hosts = (
        Host.objects.select_related("gpu_model")
        .prefetch_related(
            Prefetch("allocations", queryset=live, to_attr="live_allocations"),
            Prefetch("tenancies", queryset=open_tenancies, to_attr="open_tenancies"),
        )
        .order_by("name", "pk")
    )
    rows = []
    for host in hosts:
        by_index = {allocation.card_index: allocation for allocation in host.live_allocations}
        by_order = {tenancy.order_id: tenancy for tenancy in host.open_tenancies}
        cards = []
        for index in range(max(host.cards, max(by_index, default=-1) + 1)):
            allocation = by_index.get(index)
            tenancy = by_order.get(allocation.order_id) if allocation else None
            cards.append(
                FleetCard(index, _card_state(host, allocation, tenancy), allocation, tenancy)
            )
        rows.append(FleetHost(host=host, cards=cards))
    card_counts = Counter(card.state for row in rows for card in row.cards)
    host_counts = Counter(row.host.state for row in rows)
    return Fleet(
        hosts=rows,
        card_counts=[StateCount(s.value, s.label, card_counts[s.value]) for s in CardState],
        host_counts=[StateCount(s.value, s.label, host_counts[s.value]) for s in HostState],
    )


# ------------------------------------------------------------------- teardown queue

LAST_STEPS = 8


@dataclass(frozen=True, slots=True)
class TeardownQueue:
    # Teardown failed or the host did not answer: cards out of stock until a retry or a
    # confirmed manual teardown.
    quarantined: list[Tenancy]
    # Being revoked: by the worker, or waiting for an operator's teardown (hosts by hand).
    revoking: list[Tenancy]
    # Provisioned: waiting for an operator's preparation step before verification.
    operator_steps: list[Tenancy]
    # Provisioning or verification failed: the worker stopped retrying or is between tries.
    provisioning_problems: list[Tenancy]

    @property
    def empty(self) -> bool:
        return not (
            self.quarantined or self.revoking or self.operator_steps or self.provisioning_problems
        )


def teardown_queue() -> TeardownQueue:
    """The tenancies in front of operators, each with its host, order, customer and last
    journal steps (two queries)."""
    recent = TenancyStep.objects.order_by("-started_at", "-pk")
    rows = (
        Tenancy.objects.filter(
            Q(status__in=(TenancyStatus.REVOKING, TenancyStatus.QUARANTINED))
            | Q(status=TenancyStatus.PROVISIONING, operator_step=True)
            | (Q(status__in=(TenancyStatus.PROVISIONING, TenancyStatus.VERIFYING)) & ~Q(problem=""))
        )
        .select_related("host", "order", "order__customer")
        .prefetch_related(Prefetch("steps", queryset=recent[:LAST_STEPS], to_attr="recent_steps"))
        .order_by("updated_at", "pk")
    )
    queue = TeardownQueue([], [], [], [])
    for tenancy in rows:
        tenancy.recent_steps.reverse()  # oldest first, as the journal reads
        if tenancy.status == TenancyStatus.QUARANTINED:
            queue.quarantined.append(tenancy)
        elif tenancy.status == TenancyStatus.REVOKING:
            queue.revoking.append(tenancy)
        elif tenancy.operator_step and tenancy.status == TenancyStatus.PROVISIONING:
            queue.operator_steps.append(tenancy)
        else:
            queue.provisioning_problems.append(tenancy)
    return queue


def ops_tenancy(*, tenancy_id: int) -> Tenancy:
    """One tenancy with its host; a missing id raises Tenancy.DoesNotExist."""
    return Tenancy.objects.select_related("host").get(pk=tenancy_id)


def in_teardown_queue(tenancy: Tenancy) -> bool:
    """Whether the tenancy is listed in the operators' teardown queue."""
    return (
        tenancy.status in (TenancyStatus.REVOKING, TenancyStatus.QUARANTINED)
        or (tenancy.status == TenancyStatus.PROVISIONING and tenancy.operator_step)
        or (
            tenancy.status in (TenancyStatus.PROVISIONING, TenancyStatus.VERIFYING)
            and bool(tenancy.problem)
        )
    )


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
    # Its access host by host, each with its whole journal (`journal`) and whether it is in
    # the teardown queue (`needs_operator`).
    tenancies: list[Tenancy]

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
    """The order with its customer, who prepared it, its cards per host, its timeline of
    status changes and issue events, and its tenancies with their journals (six queries); a
    missing id raises Order.DoesNotExist."""
    journal = TenancyStep.objects.order_by("started_at", "pk")
    tenancies = Tenancy.objects.select_related("host", "erased_by").prefetch_related(
        Prefetch("steps", queryset=journal, to_attr="journal")
    )
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
            Prefetch("tenancies", queryset=tenancies.order_by("host__name", "pk")),
        )
        .get(pk=order_id)
    )
    order_tenancies = list(order.tenancies.all())
    for tenancy in order_tenancies:
        tenancy.needs_operator = in_teardown_queue(tenancy)
    return OpsOrderDetail(
        order=order,
        access=order_access(order),
        ssh_key_fingerprint=getattr(stored_ssh_key(order.ssh_public_key), "fingerprint", ""),
        status_changes=list(order.status_changes.all()),
        issue_events=list(order.issue_events.all()),
        tenancies=order_tenancies,
    )
