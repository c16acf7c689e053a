"""Creating payments from parallel connections: addresses are never reused, and a double
submission for one order opens one payment."""

from decimal import Decimal

import pytest
from django.conf import settings as django_settings

from payments.chain.addresses import derive_address
from payments.crypto.services.payments import payment_create_for_order, payment_create_top_up
from payments.models import CryptoPayment, DepositAddress
from tests.concurrency import run_concurrently

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def local_network(settings):
    # The node does not answer: payments still open (their head block unknown, the scan then
    # reads far enough back), and nothing else is asked of the chain here.
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": "http://127.0.0.1:9"}
    settings.LOCAL_TOKEN_ADDRESS = "0x" + "11" * 20


def test_parallel_payments_get_distinct_consecutive_derivation_indexes(
    local_network, make_customer
):
    customers = [make_customer() for _ in range(30)]

    results = run_concurrently(
        lambda i: payment_create_top_up(
            customer=customers[i],
            amount_usd=Decimal("25.00"),
            network_key="local",
            asset_symbol="tUSDC",
        ),
        30,
        workers=15,
    )

    assert [r for r in results if isinstance(r, Exception)] == []
    indexes = sorted(DepositAddress.objects.values_list("derivation_index", flat=True))
    assert indexes == list(range(30))
    for address in DepositAddress.objects.all():
        assert address.address == derive_address(
            xpub=django_settings.PAYMENT_XPUB, index=address.derivation_index
        )


def test_a_double_submission_for_one_order_opens_one_payment(
    local_network, customer, catalogue, place_order
):
    order = place_order(customer, catalogue["h100"])

    results = run_concurrently(
        lambda _: payment_create_for_order(
            order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
        ),
        8,
        workers=8,
    )

    assert [r for r in results if isinstance(r, Exception)] == []
    assert len({payment.pk for payment in results}) == 1
    assert CryptoPayment.objects.filter(order=order).count() == 1
    assert DepositAddress.objects.count() == 1


def test_choosing_another_stablecoin_while_the_payment_expires_never_deadlocks(
    local_network, settings, customer, catalogue, place_order
):
    from payments.crypto.services.payments import payment_expire

    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "base": "http://127.0.0.1:9"}
    settings.MAX_UNPAID_ORDERS = 12  # up to 12 orders of one customer stay awaiting payment
    outcomes = []
    for _ in range(12):
        order = place_order(customer, catalogue["h100"])
        first = payment_create_for_order(
            order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
        )

        def work(index, order=order, first=first):
            if index == 0:
                return payment_expire(payment_id=first.pk)  # the expiry job: payment, then order
            return payment_create_for_order(  # the customer: another coin for the same order
                order_id=order.pk, customer=customer, network_key="base", asset_symbol="USDC"
            )

        expired, created = run_concurrently(work, 2, workers=2)
        # Either order of events is fine; an error other than "no longer payable" is not.
        assert not isinstance(expired, Exception), expired
        first.refresh_from_db()
        order.refresh_from_db()
        if isinstance(created, Exception):
            # The expiry came first: the order was released, the new payment refused.
            assert type(created).__name__ == "OrderNotPayable", created
            assert (expired, first.status, order.status) == (1, "expired", "cancelled")
        else:
            # The customer came first: the first payment was closed, the expiry found nothing.
            assert created.network == "base"
            assert (expired, first.status, order.status) == (0, "closed", "awaiting_payment")
        outcomes.append(type(created).__name__)
    assert len(outcomes) == 12


WAITING_FOR_A_LOCK = """
    SELECT count(*) FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()
"""


def test_a_balance_payment_waiting_behind_a_crypto_payment_being_opened_closes_it(
    local_network, customer, catalogue, place_order, finance_user
):
    """Opening a crypto payment and paying from the balance, for one order, at once: the
    balance payment sees the crypto payment opened while it waited, and closes it.

    A third connection holds the order's row, so that both requests are seen waiting before
    either goes on; before the order's payment mutex, the balance payment had locked the
    order's (no) payments before it queued on the order, then paid it and left the crypto
    payment it never saw open on a paid order."""
    import threading
    import time

    import psycopg
    from django.db import connection

    from payments.crypto.services.balance_payment import balance_pay_order
    from payments.ledger.services.balance import balance_adjust
    from payments.models import LedgerTransaction, PaymentStatus, TransactionKind
    from rental.models import Order, OrderStatus

    order = place_order(customer, catalogue["h100"])
    balance_adjust(
        customer=customer,
        amount=order.total_usd,
        credit=True,
        reason="test credit",
        actor=finance_user,
        request_key="credit-1",
    )
    db = connection.settings_dict
    holder = psycopg.connect(
        dbname=db["NAME"], user=db["USER"], host=db["HOST"], port=db["PORT"] or 5432
    )
    holder.execute("SELECT 1 FROM rental_order WHERE id = %s FOR UPDATE", [order.pk])

    def waiting() -> int:
        with connection.cursor() as cursor:
            cursor.execute(WAITING_FOR_A_LOCK)
            return cursor.fetchone()[0]

    def wait_for(count: int) -> None:
        deadline = time.monotonic() + 20
        while waiting() < count:
            assert time.monotonic() < deadline, f"{count} requests never waited for a lock"
            time.sleep(0.05)

    outcomes: dict[str, object] = {}

    def run(name, work):
        try:
            outcomes[name] = work()
        except Exception as exc:  # noqa: BLE001 - inspected below
            outcomes[name] = exc
        finally:
            connection.close()

    opening = threading.Thread(
        target=run,
        args=(
            "crypto",
            lambda: payment_create_for_order(
                order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
            ),
        ),
    )
    paying = threading.Thread(
        target=run,
        args=("balance", lambda: balance_pay_order(order_id=order.pk, customer=customer)),
    )
    try:
        opening.start()
        wait_for(1)
        paying.start()
        wait_for(2)  # the race happens: both requests wait, in this order
    finally:
        holder.commit()
        holder.close()
    opening.join(30)
    paying.join(30)

    assert not isinstance(outcomes["crypto"], Exception), outcomes["crypto"]
    assert not isinstance(outcomes["balance"], Exception), outcomes["balance"]
    # Paid once, from the balance (the eager task has gone on to allocate the cards).
    assert Order.objects.get(pk=order.pk).status in (OrderStatus.PAID, OrderStatus.PROVISIONING)
    assert (
        LedgerTransaction.objects.filter(order=order, kind=TransactionKind.ORDER_PAYMENT).count()
        == 1
    )
    payment = CryptoPayment.objects.get(order=order)
    assert payment.status == PaymentStatus.CLOSED
