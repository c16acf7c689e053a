"""A top-up confirmed on the local chain (anvil) gets its receipt in the settlement that
credits it, with the payment's asset and network; the page links to it."""

from decimal import Decimal

from django.urls import reverse

from payments.chain.scanning import scan_network
from payments.crypto.services.payments import payment_create_for_order
from payments.ledger.services.posting import customer_account
from payments.models import PaymentStatus, Receipt, TransactionKind


def test_a_top_up_confirmed_on_chain_gets_a_receipt(
    chain, customer, customer_client, top_up_payment, pay
):
    payment = top_up_payment("75.00")
    pay(payment)
    scan_network(network_key="local")
    assert not Receipt.objects.exists()  # seen, not yet confirmed: nothing credited yet
    chain.mine(3)
    scan_network(network_key="local")

    payment.refresh_from_db()
    assert payment.status == PaymentStatus.CONFIRMED
    assert customer_account(customer).balance == Decimal("75.00")
    receipt = Receipt.objects.get()
    assert (receipt.kind, receipt.amount_usd, receipt.customer) == (
        TransactionKind.TOP_UP,
        Decimal("75.00"),
        customer,
    )
    assert receipt.transaction.payment_id == payment.pk
    assert receipt.description.startswith(f"Top-up {payment.reference} of the USD balance in tUSDC")

    html = customer_client.get(reverse("payments:receipt", kwargs={"number": receipt.number}))
    page = html.content.decode()
    assert "tUSDC on" in page and payment.reference in page
    history = customer_client.get(reverse("payments:history")).content.decode()
    assert f'href="{reverse("payments:receipt", kwargs={"number": receipt.number})}"' in history
    assert 'data-field="state">Confirmed<' in history


def test_orders_paid_on_chain_in_one_scan_get_consecutive_receipts(
    chain, make_customer, catalogue, place_order, pay
):
    payments = []
    for _ in range(3):
        who = make_customer()
        order = place_order(who, catalogue["h100"], lots=1, duration_days=3)
        payments.append(
            payment_create_for_order(
                order_id=order.pk, customer=who, network_key="local", asset_symbol="tUSDC"
            )
        )
    scan_network(network_key="local")
    for payment in payments:
        pay(payment)
    chain.mine(3)
    scan_network(network_key="local")  # one settlement confirms the three

    receipts = list(Receipt.objects.order_by("number"))
    assert [r.number for r in receipts] == [1, 2, 3]
    assert sorted(r.transaction.payment_id for r in receipts) == [p.pk for p in payments]
    assert {r.kind for r in receipts} == {TransactionKind.ORDER_PAYMENT}
    assert all(r.customer_id == r.transaction.order.customer_id for r in receipts)
