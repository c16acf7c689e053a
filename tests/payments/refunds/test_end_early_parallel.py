"""Operators clicking "End early and refund" at once, on separate database connections: the
refund is posted once."""

import threading
from decimal import Decimal

import pytest
from django.db import connection

from payments.ledger.services.posting import customer_account
from payments.ledger.services.refunds import RefundOutcome, order_end_early_with_refund
from payments.models import LedgerEntry, LedgerTransaction, TransactionKind
from rental.hosts.models import Tenancy, TenancyStatus
from rental.models import (
    CardAllocation,
    HostState,
    HostStateChange,
    Order,
    OrderStatus,
    OrderStatusChange,
)
from tests.concurrency import run_concurrently
from tests.conftest import confirm_teardown

from .conftest import CREDIT, paid_hours_ago

CLICKS = 8


@pytest.mark.django_db(transaction=True)
def test_concurrent_clicks_post_the_refund_once(waiting_order, operator):
    assert connection.vendor == "postgresql"
    paid_hours_ago(waiting_order, 26)
    reached, lock = [], threading.Lock()

    def click(index: int) -> RefundOutcome:
        with lock:
            reached.append(index)  # after the barrier: every click is in flight together
        return order_end_early_with_refund(
            order_id=waiting_order.pk, actor=operator, reason=f"No cards (click {index})"
        )

    results = run_concurrently(click, CLICKS, workers=CLICKS)

    assert sorted(reached) == list(range(CLICKS))
    assert all(isinstance(r, RefundOutcome) for r in results), results
    assert [r.created for r in results].count(True) == 1
    assert {r.amount for r in results} == {waiting_order.total_usd}
    refunds = LedgerTransaction.objects.filter(order=waiting_order, kind=TransactionKind.REFUND)
    assert refunds.count() == 1
    assert customer_account(waiting_order.customer).balance == Decimal(CREDIT)
    assert sum(LedgerEntry.objects.values_list("amount", flat=True)) == 0
    order = Order.objects.get(pk=waiting_order.pk)
    assert order.status == OrderStatus.ENDED
    assert OrderStatusChange.objects.filter(order=order, to_status=OrderStatus.ENDED).count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_clicks_on_an_active_order_release_its_cards_once(make_active, operator):
    order = make_active(hours=12)
    before = customer_account(order.customer).balance

    results = run_concurrently(
        lambda i: order_end_early_with_refund(
            order_id=order.pk, actor=operator, reason="Host down", host_failed=True
        ),
        4,
        workers=4,
    )

    assert all(isinstance(r, RefundOutcome) for r in results), results
    assert [r.created for r in results].count(True) == 1
    assert len({r.amount for r in results}) == 1 and results[0].amount > 0
    assert customer_account(order.customer).balance == before + results[0].amount  # once
    assert LedgerTransaction.objects.filter(order=order, kind=TransactionKind.REFUND).count() == 1
    # Revoked once, the host taken out of service once; the cards stay out of stock until the
    # teardown is verified, then come back once.
    (tenancy,) = Tenancy.objects.filter(order=order)
    assert tenancy.status == TenancyStatus.REVOKING
    assert tenancy.status_changes.filter(to_status=TenancyStatus.REVOKING).count() == 1
    out_of_service = HostStateChange.objects.filter(
        host_id=tenancy.host_id, to_status=HostState.OUT_OF_SERVICE
    )
    assert out_of_service.count() == 1
    assert CardAllocation.objects.filter(order=order, released_at=None).count() == 2
    confirm_teardown(order, operator)
    assert not CardAllocation.objects.filter(order=order, released_at=None).exists()
