"""Random sequences of credits, debits, order payments and reversals, checked after every step
against a plain in-memory model of the balances."""

from decimal import Decimal

from django.db import connection, transaction
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from payments.crypto.services.balance_payment import balance_pay_order
from payments.exceptions import InsufficientBalance
from payments.ledger.services.balance import balance_adjust
from payments.ledger.services.posting import customer_account, ledger_reverse, system_account
from payments.models import LedgerAccountKind, LedgerEntry, LedgerTransaction, TransactionKind
from rental.models import GpuModel, LotPrice, OrderStatus
from rental.services import Configuration, order_create
from tests.conftest import set_stock

CUSTOMERS = 3
amounts = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("500"), places=2)
operations = st.one_of(
    st.tuples(st.just("credit"), st.integers(0, CUSTOMERS - 1), amounts),
    st.tuples(st.just("debit"), st.integers(0, CUSTOMERS - 1), amounts),
    st.tuples(st.just("order"), st.integers(0, CUSTOMERS - 1), st.integers(1, 10)),
    st.tuples(st.just("reverse"), st.integers(0, 50), st.just(None)),
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(operations, min_size=1, max_size=15))
def test_the_ledger_matches_a_plain_model_after_every_step(db, make_customer, finance_user, steps):
    # Orders the balance cannot pay stay awaiting payment; the unpaid-orders limit is not
    # what this model checks.
    with override_settings(MAX_UNPAID_ORDERS=len(steps)), transaction.atomic():
        gpu = GpuModel.objects.create(
            slug="model-gpu",
            name="Model GPU",
            vendor="Test",
            compute_platform="cuda",
            memory_gb_per_card=16,
            cards_per_lot=1,
            description="x",
        )
        set_stock(gpu, 10_000)
        LotPrice.objects.create(gpu_model=gpu, duration_days=3, price_usd=Decimal("7.35"))
        customers = [make_customer() for _ in range(CUSTOMERS)]
        model = {c.pk: Decimal("0.00") for c in customers}
        revenue = Decimal("0.00")
        posted: list[tuple[int, int, Decimal, bool]] = []  # txn id, customer pk, delta, is payment
        reversed_ids: set[int] = set()

        for number, (kind, who, value) in enumerate(steps):
            if kind in ("credit", "debit"):
                customer = customers[who]
                delta = value if kind == "credit" else -value
                try:
                    txn = balance_adjust(
                        customer=customer,
                        amount=value,
                        credit=kind == "credit",
                        reason="model",
                        actor=finance_user,
                        request_key=f"s{number}",
                    )
                except InsufficientBalance:
                    assert model[customer.pk] + delta < 0
                else:
                    assert model[customer.pk] + delta >= 0
                    model[customer.pk] += delta
                    posted.append((txn.pk, customer.pk, delta, False))
            elif kind == "order":
                customer = customers[who]
                order = order_create(
                    customer=customer,
                    configuration=Configuration(
                        gpu_model=gpu, duration_days=3, lots=value, preparation="ubuntu"
                    ),
                )
                try:
                    balance_pay_order(order_id=order.pk, customer=customer)
                except InsufficientBalance:
                    assert model[customer.pk] < order.total_usd
                else:
                    model[customer.pk] -= order.total_usd
                    revenue += order.total_usd
                    txn = LedgerTransaction.objects.get(
                        order=order, kind=TransactionKind.ORDER_PAYMENT
                    )
                    posted.append((txn.pk, customer.pk, -order.total_usd, True))
            elif posted:  # reverse one earlier transaction
                txn_id, customer_pk, delta, is_payment = posted[who % len(posted)]
                try:
                    ledger_reverse(transaction_id=txn_id, memo="model", actor=finance_user)
                except InsufficientBalance:
                    assert model[customer_pk] - delta < 0
                else:
                    if txn_id not in reversed_ids:
                        reversed_ids.add(txn_id)
                        model[customer_pk] -= delta
                        if is_payment:
                            revenue += delta

            # After every step: the database agrees with the model, to the cent.
            for customer in customers:
                assert customer_account(customer).balance == model[customer.pk]
            assert system_account(LedgerAccountKind.REVENUE).balance == revenue
            assert sum(LedgerEntry.objects.values_list("amount", flat=True)) == 0
            with connection.cursor() as cursor:
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the commit-time checks
                cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        transaction.set_rollback(True)


def test_paying_again_finds_the_order_paid_without_a_second_debit(
    customer, catalogue, place_order, credit
):
    credit(customer, "1000.00")
    order = place_order(customer, catalogue["h100"])
    balance_pay_order(order_id=order.pk, customer=customer)
    assert balance_pay_order(order_id=order.pk, customer=customer).status == (
        OrderStatus.PROVISIONING
    )
    assert customer_account(customer).balance == Decimal("1000.00") - order.total_usd
    assert LedgerTransaction.objects.filter(order=order).count() == 1
