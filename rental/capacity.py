"""Stock comes from the hosts: free cards of available hosts, minus what unpaid orders hold.

An order awaiting payment (or under payment review) holds its lots without cards being chosen;
a paid order whose capacity vanished keeps holding them while it waits in the operators' queue.
Cards are chosen only when an order is paid (`rental.services.order_allocate`).
"""

from collections import defaultdict
from collections.abc import Iterable

from django.db.models import Count, Q, Sum
from django.utils import timezone

from .allocation import FreeHost
from .models import (
    HOLDING_STATUSES,
    CardAllocation,
    GpuModel,
    Host,
    HostState,
    Order,
    OrderStatus,
    ProvisioningIssue,
)

HOLDING = Q(status__in=HOLDING_STATUSES) | Q(
    status=OrderStatus.PAID, provisioning_issue=ProvisioningIssue.CAPACITY
)


def _holding(now=None) -> Q:
    """Orders that hold lots now: an unpaid order's hold ends at `hold_until` even before the
    minute tick cancels it (empty while a live crypto payment holds it)."""
    expired = Q(
        status=OrderStatus.AWAITING_PAYMENT,
        hold_until__isnull=False,
        hold_until__lte=now or timezone.now(),
    )
    return HOLDING & ~expired


def free_hosts(gpu_model_ids: Iterable[int]) -> dict[int, list[FreeHost]]:
    """Available hosts of these models with the indices of their free cards (two queries)."""
    hosts = list(
        Host.objects.filter(gpu_model_id__in=list(gpu_model_ids), state=HostState.AVAILABLE)
        .order_by("name", "pk")
        .values_list("pk", "gpu_model_id", "cards")
    )
    taken: dict[int, set[int]] = defaultdict(set)
    for host_id, card_index in CardAllocation.objects.filter(
        host_id__in=[host_id for host_id, _model, _cards in hosts], released_at__isnull=True
    ).values_list("host_id", "card_index"):
        taken[host_id].add(card_index)
    by_model: dict[int, list[FreeHost]] = defaultdict(list)
    for host_id, model_id, cards in hosts:
        free = tuple(index for index in range(cards) if index not in taken[host_id])
        by_model[model_id].append(FreeHost(host_id=host_id, free_cards=free))
    return by_model


def held_lots(
    gpu_model_ids: Iterable[int], *, exclude_order_id: int | None = None
) -> dict[int, int]:
    """Lots held by orders that have no cards yet, per model (one query)."""
    orders = Order.objects.filter(_holding(), gpu_model_id__in=list(gpu_model_ids))
    if exclude_order_id is not None:
        orders = orders.exclude(pk=exclude_order_id)
    rows = orders.values("gpu_model_id").annotate(lots=Sum("lots")).order_by()
    return {row["gpu_model_id"]: row["lots"] for row in rows}


def lots_free_per_model(gpu_models: Iterable[GpuModel]) -> dict[int, int]:
    """Whole lots the available hosts can still take, per model id (one query: each host's
    live cards are counted in the database, never loaded)."""
    cards_per_lot = {model.pk: model.cards_per_lot for model in gpu_models}
    free: dict[int, int] = defaultdict(int)
    hosts = (
        Host.objects.filter(gpu_model_id__in=list(cards_per_lot), state=HostState.AVAILABLE)
        .annotate(taken=Count("allocations", filter=Q(allocations__released_at__isnull=True)))
        .values_list("gpu_model_id", "cards", "taken")
        .order_by()
    )
    for model_id, cards, taken in hosts:
        free[model_id] += (cards - taken) // cards_per_lot[model_id]
    return free


def lots_available(gpu_models: Iterable[GpuModel]) -> dict[int, int]:
    """Lots a new order may take now, per model id (two queries, whatever the size)."""
    models = list(gpu_models)
    free = lots_free_per_model(models)
    held = held_lots([model.pk for model in models])
    return {model.pk: max(0, free[model.pk] - held.get(model.pk, 0)) for model in models}
