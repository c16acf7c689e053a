from decimal import Decimal

import pytest
from django.core import mail
from django.db import connection
from django.test import Client
from django.urls import reverse

from payments.crypto.services.balance_payment import balance_pay_order
from payments.exceptions import InsufficientBalance, OrderNotPayable
from payments.ledger.services.balance import balance_adjust
from payments.ledger.services.posting import customer_account, system_account
from payments.models import LedgerAccountKind, LedgerEntry, LedgerTransaction, TransactionKind
from rental.models import GpuModel, LotPrice, Order, OrderStatus, OrderStatusChange
from rental.services import order_cancel_by_customer
from tests.concurrency import run_concurrently
from tests.conftest import set_stock


def pay_url(order):
    return reverse("payments:pay_with_balance", kwargs={"order_id": order.pk})


def test_a_balance_that_covers_the_order_pays_it_in_one_transaction(
    customer_client, customer, catalogue, place_order, credit, django_capture_on_commit_callbacks
):
    credit(customer, "1000.00")
    order = place_order(customer, catalogue["h100"], lots=2, duration_days=7)  # 893.76

    with django_capture_on_commit_callbacks(execute=True):
        response = customer_client.post(pay_url(order), follow=True)

    html = response.content.decode()
    assert f"Order {order.reference} is paid from your USD balance." in html
    # Paid, and its cards allocated at once: the order is being provisioned.
    assert 'data-field="status">Provisioning<' in html
    order.refresh_from_db()
    assert order.status == OrderStatus.PROVISIONING
    payment = LedgerTransaction.objects.get(kind=TransactionKind.ORDER_PAYMENT)
    assert payment.order == order
    assert payment.actor == customer
    assert customer_account(customer).balance == Decimal("106.24")
    assert system_account(LedgerAccountKind.REVENUE).balance == Decimal("893.76")
    paid = OrderStatusChange.objects.get(order=order, to_status=OrderStatus.PAID)
    assert paid.actor == customer
    # What follows is queued after the commit: the payment email, once.
    assert [m.subject for m in mail.outbox] == [f"Payment received for order {order.reference}"]
    assert "893.76 USD" in mail.outbox[0].body


def test_the_payment_email_follows_the_customers_language(
    make_customer, catalogue, place_order, credit, django_capture_on_commit_callbacks
):
    italian = make_customer(language="it")
    credit(italian, "500.00")
    order = place_order(italian, catalogue["mi300x"], lots=1, duration_days=3)
    with django_capture_on_commit_callbacks(execute=True):
        balance_pay_order(order_id=order.pk, customer=italian)
    assert mail.outbox[-1].subject == f"Pagamento ricevuto per l'ordine {order.reference}"


def test_a_short_balance_shows_the_shortfall_and_cannot_pay(
    customer_client, customer, catalogue, place_order, credit
):
    credit(customer, "100.00")
    order = place_order(customer, catalogue["h100"], lots=1, duration_days=7)  # 446.88
    html = customer_client.get(
        reverse("rental:order_detail", kwargs={"order_id": order.pk})
    ).content.decode()
    assert "Your balance is short by 346.88 USD." in html
    assert "disabled" in html[html.index('data-field="balance-option"') :]

    response = customer_client.post(pay_url(order), follow=True)

    assert "The balance is 100.00 USD; 446.88 USD are needed. Nothing was charged." in (
        response.content.decode()
    )
    order.refresh_from_db()
    assert order.status == OrderStatus.AWAITING_PAYMENT
    assert customer_account(customer).balance == Decimal("100.00")
    assert not LedgerTransaction.objects.filter(kind=TransactionKind.ORDER_PAYMENT).exists()


def test_no_balance_at_all_shows_the_whole_amount_as_shortfall(
    customer_client, customer, catalogue, place_order
):
    order = place_order(customer, catalogue["h100"], lots=1, duration_days=3)
    html = customer_client.get(
        reverse("rental:order_detail", kwargs={"order_id": order.pk})
    ).content.decode()
    assert "Your balance is short by 201.60 USD." in html


def test_another_customers_order_answers_404_and_nothing_is_charged(
    customer_client, customer, make_customer, catalogue, place_order, credit
):
    credit(customer, "5000.00")
    theirs = place_order(make_customer(), catalogue["h100"])
    response = customer_client.post(pay_url(theirs))
    assert response.status_code == 404
    theirs.refresh_from_db()
    assert theirs.status == OrderStatus.AWAITING_PAYMENT
    assert customer_account(customer).balance == Decimal("5000.00")


def test_a_cancelled_order_cannot_be_paid(customer, catalogue, place_order, credit):
    credit(customer, "5000.00")
    order = place_order(customer, catalogue["h100"])
    order_cancel_by_customer(order_id=order.pk, customer=customer)
    with pytest.raises(OrderNotPayable):
        balance_pay_order(order_id=order.pk, customer=customer)
    assert customer_account(customer).balance == Decimal("5000.00")


def test_paying_needs_a_csrf_token(customer, catalogue, place_order, credit):
    credit(customer, "5000.00")
    order = place_order(customer, catalogue["h100"])
    client = Client(enforce_csrf_checks=True)
    client.force_login(customer)
    assert client.post(pay_url(order)).status_code == 403
    order.refresh_from_db()
    assert order.status == OrderStatus.AWAITING_PAYMENT


def test_paying_needs_a_login(client, customer, catalogue, place_order, credit):
    credit(customer, "5000.00")
    order = place_order(customer, catalogue["h100"])
    response = client.post(pay_url(order))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))
    order.refresh_from_db()
    assert order.status == OrderStatus.AWAITING_PAYMENT


def test_ten_sequential_replays_make_one_debit_and_show_the_same_paid_order(
    customer_client, customer, catalogue, place_order, credit, django_capture_on_commit_callbacks
):
    credit(customer, "1000.00")
    order = place_order(customer, catalogue["h100"], lots=1, duration_days=7)
    for _ in range(10):
        with django_capture_on_commit_callbacks(execute=True):
            response = customer_client.post(pay_url(order), follow=True)
        assert response.redirect_chain[-1][0] == reverse(
            "rental:order_detail", kwargs={"order_id": order.pk}
        )
        assert 'data-field="status">Provisioning<' in response.content.decode()
    assert LedgerTransaction.objects.filter(kind=TransactionKind.ORDER_PAYMENT).count() == 1
    assert customer_account(customer).balance == Decimal("553.12")
    assert len(mail.outbox) == 1


@pytest.mark.django_db(transaction=True)
def test_ten_concurrent_replays_of_one_payment_make_one_transaction(
    customer, catalogue, place_order, credit
):
    credit(customer, "1000.00")
    order = place_order(customer, catalogue["h100"], lots=1, duration_days=7)

    results = run_concurrently(
        lambda _: balance_pay_order(order_id=order.pk, customer=customer), 10, workers=10
    )

    assert all(isinstance(result, Order) for result in results), results
    assert LedgerTransaction.objects.filter(kind=TransactionKind.ORDER_PAYMENT).count() == 1
    assert customer_account(customer).balance == Decimal("553.12")
    assert Order.objects.get(pk=order.pk).status == OrderStatus.PROVISIONING


@pytest.mark.django_db(transaction=True)
def test_200_concurrent_one_dollar_payments_against_100_dollars(
    customer, credit, place_order, settings
):
    assert connection.vendor == "postgresql"
    settings.MAX_UNPAID_ORDERS = 200  # one balance pays 200 orders of one customer at once
    cheap = GpuModel.objects.create(
        slug="test-1usd",
        name="Test 1 USD",
        vendor="Test",
        compute_platform="cuda",
        memory_gb_per_card=16,
        cards_per_lot=1,
        description="test",
    )
    set_stock(cheap, 200)
    LotPrice.objects.create(gpu_model=cheap, duration_days=3, price_usd=Decimal("1.00"))
    orders = [place_order(customer, cheap, lots=1, duration_days=3) for _ in range(200)]
    credit(customer, "100.00")

    results = run_concurrently(
        lambda i: balance_pay_order(order_id=orders[i].pk, customer=customer), 200
    )

    paid = [r for r in results if isinstance(r, Order)]
    short = [r for r in results if isinstance(r, InsufficientBalance)]
    assert (len(paid), len(short)) == (100, 100), [
        r for r in results if isinstance(r, Exception) and not isinstance(r, InsufficientBalance)
    ][:3]
    assert customer_account(customer).balance == Decimal("0.00")
    assert Order.objects.filter(status=OrderStatus.PROVISIONING).count() == 100
    assert LedgerTransaction.objects.filter(kind=TransactionKind.ORDER_PAYMENT).count() == 100
    assert sum(LedgerEntry.objects.values_list("amount", flat=True)) == 0
    assert system_account(LedgerAccountKind.REVENUE).balance == Decimal("100.00")


@pytest.mark.django_db(transaction=True)
def test_opposite_direction_concurrent_adjustments_neither_deadlock_nor_fail(
    make_customer, finance_user
):
    alice, bob = make_customer(), make_customer()
    for person in (alice, bob):
        balance_adjust(
            customer=person,
            amount=Decimal("100.00"),
            credit=True,
            reason="opening",
            actor=finance_user,
            request_key=f"open-{person.pk}",
        )

    def adjust(index):
        person = (alice, bob)[index % 2]
        return balance_adjust(
            customer=person,
            amount=Decimal("1.00"),
            credit=(index // 2) % 2 == 0,
            reason="concurrent",
            actor=finance_user,
            request_key=f"concurrent-{index}",
        )

    results = run_concurrently(adjust, 80)

    assert [r for r in results if isinstance(r, Exception)] == []
    assert customer_account(alice).balance == Decimal("100.00")
    assert customer_account(bob).balance == Decimal("100.00")
    assert system_account(LedgerAccountKind.ADJUSTMENTS).balance == Decimal("-200.00")
