"""Ending an order early (no cards in time, a failed host): the intent payments calls.

Payments (payments.ledger.services.refunds) takes its locks, calls `order_end_early`, then credits
the refund it computes with rental.refunds.refund_for_order at the same instant.
"""

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from outbox.messages import enqueue

from ..exceptions import RentalError
from ..hosts.services import hosts_take_out_of_service
from ..hosts.tenancy import tenancies_revoke
from ..locks import lock_order
from ..models import CardAllocation, Order, OrderEmailKind, OrderStatus
from ..refunds import EARLY_END_STATUSES, early_end_check
from .extensions import extensions_cancel_for_order


class EarlyEndRefused(RentalError):
    """The order may not be ended early now; `message` says why."""


def order_end_early(
    *,
    order_id: int,
    actor: User | None,
    reason: str,
    now: datetime | None = None,
    host_failed: bool = False,
) -> Order | None:
    """End the order now, before its end: it is ended with `ended_early_at = now`, every
    host's access is revoked (the cards go back to stock once the teardown is verified; with
    `host_failed` the order's hosts are taken out of service until a host check passes),
    extensions awaiting payment are cancelled and the customer gets the "ended"
    email (which tells the hours refunded) after the commit.

    Only from paid, provisioning or active, in a case of rental.refunds.early_end_check: paid
    or provisioning past EARLY_END_WAITING_HOURS since it was paid, or (`host_failed`, the
    operator's statement) an active or provisioning order whose host failed. Raises
    EarlyEndRefused otherwise (nothing changed). Returns None when the order had already moved
    on (ended, cancelled, ended early by an earlier call): a repeated call changes nothing.

    An active order's `ends_at` becomes `now`: the period shown is the one delivered. The
    refund is computed from the start and the durations (never `ends_at`), so the quote at
    `ended_early_at` stays what was credited. An order that never started keeps no period.

    The returned order carries `early_end`: the EarlyEndCheck it was ended under (its case and
    its refund quote at `now`).

    Locks the order row (after the payment and ledger locks of its caller: payments.locks).
    """
    from .orders import order_set_status

    reason = reason.strip()
    if not reason:
        raise ValueError("ending an order early needs a reason")
    now = now or timezone.now()
    with transaction.atomic():
        order = lock_order(order_id)
        if order.status not in EARLY_END_STATUSES or order.ended_early_at is not None:
            return None
        check = early_end_check(order, now)
        refusal = check.refusal_for(host_failed=host_failed)
        if refusal:
            raise EarlyEndRefused(refusal)
        fields = {"ended_early_at": now}
        if order.starts_at is not None:
            # The period's CHECK wants an end after the start, even in the start's microsecond.
            fields["ends_at"] = max(now, order.starts_at + timedelta(microseconds=1))
        order = order_set_status(
            order_id=order.pk,
            to_status=OrderStatus.ENDED,
            actor=actor,
            reason=reason[:500],
            **fields,
        )
        order.early_end = check
        tenancies_revoke(order_id=order.pk, actor=actor, reason=f"Ended early: {reason}"[:500])
        if host_failed:
            host_ids = CardAllocation.objects.filter(
                order=order, released_at__isnull=True
            ).values_list("host_id", flat=True)
            hosts_take_out_of_service(
                host_ids=list(host_ids),
                actor=actor,
                reason=f"Order {order.reference} ended early because this host failed: {reason}"[
                    :500
                ],
            )
        extensions_cancel_for_order(
            order_id=order.pk, reason="The order was ended early before it was paid", actor=actor
        )
        enqueue("rental.tasks.order_email", order.pk, OrderEmailKind.ENDED)
    return order
