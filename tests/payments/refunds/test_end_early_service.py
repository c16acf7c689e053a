"""Ending an order early with its refund (payments.ledger.services.refunds): who gets what, what is
released, what is refused, and that nothing moves twice."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.core import mail
from django.db import IntegrityError, transaction

from outbox.models import OutboxEvent
from payments.crypto.services.extensions import extension_pay_from_balance
from payments.ledger.services.posting import customer_account, ledger_post, system_account
from payments.ledger.services.refunds import (
    OrderNotEndable,
    RefundQuoteChanged,
    order_end_early_with_refund,
)
from payments.models import LedgerAccountKind, LedgerTransaction, TransactionKind
from rental.hosts.services import host_return_manual
from rental.models import (
    CardAllocation,
    ExtensionStatus,
    Host,
    HostState,
    Order,
    OrderExtension,
    OrderStatus,
    OrderStatusChange,
)
from rental.money import usd
from rental.services import EarlyEndRefused, extension_create, order_set_status
from tests.conftest import confirm_teardown, lots_available

from .conftest import CREDIT, paid_hours_ago

REASON = "No H200 card free since payment: the new host is late."


def balance_of(customer) -> Decimal:
    return customer_account(customer).balance


def refunds_of(order) -> list[LedgerTransaction]:
    return list(LedgerTransaction.objects.filter(order=order, kind=TransactionKind.REFUND))


def credited(refund: LedgerTransaction) -> dict[str, Decimal]:
    return {entry.account.kind: entry.amount for entry in refund.entries.all()}


def test_a_paid_order_waiting_past_the_threshold_gets_its_whole_price_back(
    waiting_order, operator, django_capture_on_commit_callbacks
):
    paid_hours_ago(waiting_order, 25)
    before = balance_of(waiting_order.customer)
    with django_capture_on_commit_callbacks(execute=True):
        outcome = order_end_early_with_refund(
            order_id=waiting_order.pk, actor=operator, reason=REASON
        )

    assert outcome.created and outcome.hours == 7 * 24
    assert outcome.amount == waiting_order.total_usd
    assert balance_of(waiting_order.customer) == before + waiting_order.total_usd
    (refund,) = refunds_of(waiting_order)
    assert refund.actor == operator
    assert refund.idempotency_key == f"refund:order:{waiting_order.pk}"
    assert credited(refund) == {
        LedgerAccountKind.CUSTOMER_BALANCE: waiting_order.total_usd,
        LedgerAccountKind.REVENUE: -waiting_order.total_usd,
    }
    assert "no cards in time" in refund.memo
    order = Order.objects.get(pk=waiting_order.pk)
    assert order.status == OrderStatus.ENDED
    assert order.ended_early_at is not None and order.starts_at is None
    assert not CardAllocation.objects.filter(order=order).exists()
    change = order.status_changes.last()
    assert (change.from_status, change.to_status) == (OrderStatus.PAID, OrderStatus.ENDED)
    assert (change.actor, change.reason) == (operator, REASON)
    # Webhooks: the order ended, the balance was credited with the refund.
    events = {e.event_type: e.payload for e in OutboxEvent.objects.filter(account=order.customer)}
    assert events["order.ended"]["order"]["id"] == order.pk
    assert events["balance.credited"]["credit"]["kind"] == "refund"
    assert events["balance.credited"]["credit"]["amount_usd"] == f"{order.total_usd:.2f}"


def test_the_customer_is_emailed_the_hours_amount_reason_and_balance_in_their_language(
    waiting_order, operator, django_capture_on_commit_callbacks
):
    customer = waiting_order.customer
    customer.language = "it"
    customer.save(update_fields=["language"])
    paid_hours_ago(waiting_order, 30)
    with django_capture_on_commit_callbacks(execute=True):
        order_end_early_with_refund(order_id=waiting_order.pk, actor=operator, reason=REASON)

    (email,) = [m for m in mail.outbox if waiting_order.reference in m.subject]
    assert email.to == [customer.email]
    total = f"{waiting_order.total_usd:,.2f}".replace(",", "X").replace(".", ",")
    balance = f"{balance_of(customer):,.2f}".replace(",", "X").replace(".", ",")
    assert "168 ore non erogate" in email.body
    assert f"{total.replace('X', '.')} USD" in email.body
    assert f"Il tuo saldo ora è {balance.replace('X', '.')} USD" in email.body
    assert REASON in email.body


def test_a_provisioning_order_past_the_threshold_releases_its_cards(
    provisioning_order, operator, catalogue
):
    model = catalogue["h100"]
    free_before = lots_available(model)
    assert CardAllocation.objects.filter(order=provisioning_order, released_at=None).count() == 2
    paid_hours_ago(provisioning_order, 24.5)

    outcome = order_end_early_with_refund(
        order_id=provisioning_order.pk, actor=operator, reason="Hosts never prepared"
    )

    assert outcome.amount == provisioning_order.total_usd
    # Access is being revoked: the cards stay out of stock until the teardown is verified.
    assert CardAllocation.objects.filter(order=provisioning_order, released_at=None).count() == 2
    assert lots_available(model) == free_before
    confirm_teardown(provisioning_order, operator)
    assert not CardAllocation.objects.filter(order=provisioning_order, released_at=None).exists()
    assert lots_available(model) == free_before + 2


def test_an_active_order_whose_host_failed_gets_the_hours_not_delivered(
    make_active, operator, catalogue
):
    order = make_active(hours=1)
    model = catalogue["h100"]
    free_before = lots_available(model)
    now = order.starts_at + timedelta(hours=10, minutes=30)
    before = balance_of(order.customer)

    outcome = order_end_early_with_refund(
        order_id=order.pk,
        actor=operator,
        reason="GPU 1 fell off the bus",
        host_failed=True,
        now=now,
    )

    # 7 days = 168 hours; 10 h 30 min delivered: 157.5 left, the started hour counts → 158.
    expected = usd(order.lot_price_usd * 158 * order.lots / 168)
    assert (outcome.hours, outcome.amount) == (158, expected)
    assert balance_of(order.customer) == before + expected
    ended = Order.objects.get(pk=order.pk)
    assert ended.status == OrderStatus.ENDED
    assert ended.ended_early_at == now and ended.ends_at == now
    assert ended.starts_at == order.starts_at
    assert "host failed" in refunds_of(order)[0].memo
    # The failed host is out of service: none of its cards is sold, not even the free ones;
    # the order's stay out of stock until its teardown is verified.
    (host,) = Host.objects.filter(allocations__order=order).distinct()
    assert host.state == HostState.OUT_OF_SERVICE
    assert CardAllocation.objects.filter(order=order, released_at=None).count() == 2
    assert lots_available(model) == free_before - (host.cards - 2)
    confirm_teardown(order, operator)
    assert not CardAllocation.objects.filter(order=order, released_at=None).exists()
    assert lots_available(model) == free_before - (host.cards - 2)
    # Back in stock once the host is returned to service (prepared by hand: an operator's word).
    host_return_manual(host_id=host.pk, actor=operator)
    assert lots_available(model) == free_before + 2


def test_ending_early_cancels_an_extension_awaiting_payment_and_refunds_a_paid_one(
    make_active, operator
):
    order = make_active(hours=2)
    own_end = order.starts_at + timedelta(days=7)
    # Paid the real way (its revenue booked: a refund never gives back more than that).
    paid = extension_create(order_id=order.pk, customer=order.customer, duration_days=3)
    extension_pay_from_balance(extension_id=paid.pk, customer=order.customer)
    paid.refresh_from_db()
    assert (paid.status, paid.period_starts_at) == (ExtensionStatus.PAID, own_end)
    waiting = OrderExtension.objects.create(
        order=order,
        customer=order.customer,
        duration_days=7,
        lots=order.lots,
        lot_price_usd=Decimal("500.00"),
        total_usd=Decimal("1000.00"),
    )
    now = order.starts_at + timedelta(hours=24)

    outcome = order_end_early_with_refund(
        order_id=order.pk, actor=operator, reason="Host lost", host_failed=True, now=now
    )

    assert outcome.hours == 144 + 72
    assert outcome.amount == usd(order.lot_price_usd * 144 * order.lots / 168 + paid.total_usd)
    waiting.refresh_from_db()
    assert waiting.status == ExtensionStatus.CANCELLED
    assert waiting.status_changes.last().actor == operator


def _nothing_changed(order: Order, balance: Decimal) -> None:
    current = Order.objects.get(pk=order.pk)
    assert current.status == order.status and current.ended_early_at is None
    assert refunds_of(order) == []
    assert balance_of(order.customer) == balance
    assert not OrderStatusChange.objects.filter(order=order, to_status=OrderStatus.ENDED).exists()


def test_a_paid_order_before_the_threshold_is_refused(waiting_order, operator):
    paid_hours_ago(waiting_order, 23)
    balance = balance_of(waiting_order.customer)
    with pytest.raises(EarlyEndRefused, match="24 hours after it was paid"):
        order_end_early_with_refund(
            order_id=waiting_order.pk, actor=operator, reason=REASON, host_failed=True
        )
    _nothing_changed(waiting_order, balance)


def test_an_active_order_needs_the_operator_to_state_the_host_failed(make_active, operator):
    order = make_active(hours=3)
    balance = balance_of(order.customer)
    with pytest.raises(EarlyEndRefused, match="only if its host failed"):
        order_end_early_with_refund(order_id=order.pk, actor=operator, reason="Customer asked")
    _nothing_changed(order, balance)
    assert CardAllocation.objects.filter(order=order, released_at=None).count() == 2


def test_a_rental_already_over_is_refused(make_active, operator):
    order = make_active(hours=1)
    balance = balance_of(order.customer)
    with pytest.raises(EarlyEndRefused, match="No hour of this rental is left"):
        order_end_early_with_refund(
            order_id=order.pk,
            actor=operator,
            reason="late",
            host_failed=True,
            now=order.ends_at + timedelta(minutes=1),
        )
    _nothing_changed(order, balance)


@pytest.mark.parametrize("status", [OrderStatus.AWAITING_PAYMENT, OrderStatus.CANCELLED])
def test_an_unpaid_or_cancelled_order_is_refused(
    catalogue, customer, place_order, operator, status
):
    order = place_order(customer, catalogue["h100"])
    if status == OrderStatus.CANCELLED:
        order = order_set_status(order_id=order.pk, to_status=status, actor=None, reason="test")
    with pytest.raises(OrderNotEndable):
        order_end_early_with_refund(
            order_id=order.pk, actor=operator, reason=REASON, host_failed=True
        )
    assert Order.objects.get(pk=order.pk).status == status
    assert refunds_of(order) == []


def test_an_unknown_order_does_not_exist(db, operator):
    with pytest.raises(Order.DoesNotExist):
        order_end_early_with_refund(order_id=987654, actor=operator, reason=REASON)


def test_a_changed_amount_is_refused_and_nothing_moves(make_active, operator):
    order = make_active(hours=5)
    balance = balance_of(order.customer)
    now = order.starts_at + timedelta(hours=5, minutes=1)
    with pytest.raises(RefundQuoteChanged, match="now 163 hours") as refused:
        order_end_early_with_refund(
            order_id=order.pk,
            actor=operator,
            reason="Host down",
            host_failed=True,
            expected_amount=Decimal("1.00"),
            now=now,
        )
    assert refused.value.amount == usd(order.lot_price_usd * 163 * order.lots / 168)
    _nothing_changed(order, balance)
    assert CardAllocation.objects.filter(order=order, released_at=None).count() == 2


def test_a_second_call_posts_nothing_more(waiting_order, operator):
    paid_hours_ago(waiting_order, 48)
    first = order_end_early_with_refund(order_id=waiting_order.pk, actor=operator, reason=REASON)
    again = order_end_early_with_refund(order_id=waiting_order.pk, actor=operator, reason="again")
    assert first.created and not again.created
    assert again.refund == first.refund and again.amount == first.amount
    assert len(refunds_of(waiting_order)) == 1
    assert balance_of(waiting_order.customer) == Decimal(CREDIT)
    assert waiting_order.status_changes.filter(to_status=OrderStatus.ENDED).count() == 1


def test_the_database_allows_one_refund_per_order(waiting_order, operator):
    paid_hours_ago(waiting_order, 48)
    order_end_early_with_refund(order_id=waiting_order.pk, actor=operator, reason=REASON)
    balance = customer_account(waiting_order.customer)
    revenue = system_account(LedgerAccountKind.REVENUE)
    with pytest.raises(IntegrityError), transaction.atomic():
        ledger_post(
            kind=TransactionKind.REFUND,
            lines=[(balance, Decimal("1.00")), (revenue, Decimal("-1.00"))],
            memo="a second refund",
            idempotency_key="refund:other-key",
            order=waiting_order,
        )
    assert len(refunds_of(waiting_order)) == 1


def test_the_refund_is_the_quote_of_the_moment_it_ended(make_active, operator):
    """The order page recomputes the hours from the order; they match what was credited."""
    from rental.refunds import early_end_summary

    order = make_active(hours=30)
    outcome = order_end_early_with_refund(
        order_id=order.pk, actor=operator, reason="Host down", host_failed=True
    )
    summary = early_end_summary(Order.objects.get(pk=order.pk))
    assert (summary.hours, summary.amount) == (outcome.hours, outcome.amount)
    assert summary.ended_at == Order.objects.get(pk=order.pk).ended_early_at
