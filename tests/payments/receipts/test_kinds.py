"""What each receipted kind says: an extension, a refund, a withdrawal paid out (posted here
through the ledger as their services post them, with the rows they point to)."""

from decimal import Decimal

from django.urls import reverse

from payments.ledger.services.posting import customer_account, ledger_post, system_account
from payments.models import LedgerAccountKind, Receipt, TransactionKind, Withdrawal
from rental.models import OrderExtension
from tests.states import withdrawal_walk


def test_an_extension_payment_names_the_extension_and_its_order(customer, paid_order):
    order = paid_order(customer, lots=2, duration_days=7)
    extension = OrderExtension.objects.create(
        order=order,
        customer=customer,
        duration_days=3,
        lots=2,
        lot_price_usd=Decimal("10.00"),
        total_usd=Decimal("20.00"),
    )
    balance = customer_account(customer)
    ledger_post(
        kind=TransactionKind.ADJUSTMENT,
        lines=[
            (balance, Decimal("20.00")),
            (system_account(LedgerAccountKind.ADJUSTMENTS), Decimal("-20.00")),
        ],
        memo="test credit",
        idempotency_key="test-credit",
    )
    ledger_post(
        kind=TransactionKind.EXTENSION_PAYMENT,
        lines=[
            (balance, Decimal("-20.00")),
            (system_account(LedgerAccountKind.REVENUE), Decimal("20.00")),
        ],
        memo="test extension",
        idempotency_key="test-extension",
        order=order,
        extension=extension,
    )
    receipt = Receipt.objects.get(kind=TransactionKind.EXTENSION_PAYMENT)
    assert receipt.number == 2  # after the order's
    assert receipt.amount_usd == Decimal("20.00")
    assert receipt.description == (
        f"Extension {extension.reference} of order {order.reference}: 3 more days, 2 lots"
    )


def test_a_refund_of_an_order_ended_early_is_credited_to_the_balance(
    customer, customer_client, paid_order
):
    order = paid_order(customer)
    ledger_post(
        kind=TransactionKind.REFUND,
        lines=[
            (customer_account(customer), Decimal("120.50")),
            (system_account(LedgerAccountKind.REVENUE), Decimal("-120.50")),
        ],
        memo="test refund",
        idempotency_key="test-refund",
        order=order,
    )
    receipt = Receipt.objects.get(kind=TransactionKind.REFUND)
    assert receipt.description == f"Refund for order {order.reference}"
    html = customer_client.get(
        reverse("payments:receipt", kwargs={"number": receipt.number})
    ).content.decode()
    assert 'data-field="amount">120.50 USD<' in html
    assert 'data-field="method">Credited to the USD balance<' in html
    listed = customer_client.get(reverse("payments:receipts"), {"order": order.pk})
    assert listed.content.decode().count("data-receipt=") == 2  # the payment and the refund


def test_a_withdrawal_paid_out_names_the_address_and_shows_the_transaction(
    customer, customer_client, credit
):
    address = "0x" + "ab" * 20
    tx_hash = "0x" + "cd" * 32
    withdrawal = Withdrawal.objects.create(
        customer=customer,
        amount_usd=Decimal("40.00"),
        network="local",
        chain_id=31337,
        asset="tUSDC",
        token_address="0x" + "11" * 20,
        decimals=6,
        amount_units=40_000_000,
        to_address=address,
        confirmations_required=3,
    )
    withdrawal_walk(withdrawal, "paid", tx_hash=tx_hash)
    pending = system_account(LedgerAccountKind.WITHDRAWALS_PENDING)
    credit(customer, "40.00")
    ledger_post(
        kind=TransactionKind.WITHDRAWAL_REQUEST,
        lines=[(customer_account(customer), Decimal("-40.00")), (pending, Decimal("40.00"))],
        memo="test request",
        idempotency_key="test-withdrawal-request",
        withdrawal=withdrawal,
    )
    ledger_post(
        kind=TransactionKind.WITHDRAWAL_PAID,
        lines=[
            (pending, Decimal("-40.00")),
            (
                system_account(LedgerAccountKind.WITHDRAWALS_PAID, asset="tUSDC", network="local"),
                Decimal("40.00"),
            ),
        ],
        memo="test withdrawal",
        idempotency_key="test-withdrawal",
        withdrawal=withdrawal,
    )
    receipt = Receipt.objects.get()
    assert receipt.customer == customer  # no balance line: the withdrawal's customer
    assert receipt.description.startswith(f"Withdrawal {withdrawal.reference} in tUSDC on ")
    assert receipt.description.endswith(f" to {address}")
    html = customer_client.get(
        reverse("payments:receipt", kwargs={"number": receipt.number})
    ).content.decode()
    assert f"<code>{tx_hash}</code>" in html
    assert ">Sent<" in html
    # The history's movement (the request, on the balance) links to the receipt of its payout.
    history = customer_client.get(reverse("payments:history")).content.decode()
    request_row = history.split("Withdrawal requested")[1].split("</tr>")[0]
    assert f'href="{reverse("payments:receipt", kwargs={"number": receipt.number})}"' in request_row
    assert 'data-field="withdrawal-state">Paid<' in request_row
    # So does the statement's.
    statement = customer_client.get(reverse("payments:statement")).content.decode()
    held = statement.split(f"Held for withdrawal {withdrawal.reference}")[1].split("</tr>")[0]
    receipt_url = reverse("payments:receipt", kwargs={"number": receipt.number})
    assert f'href="{receipt_url}" data-field="receipt-link">Receipt {receipt.reference}<' in held
