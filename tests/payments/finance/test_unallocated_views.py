"""The console's page of the receipts awaiting allocation: the account's balance and every
payment holding money in it, with what the reconciliation would call stranded marked."""

import re
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from payments.crypto.services.payments import payment_create_top_up
from payments.crypto.services.review import payment_mark_invalid
from payments.crypto.services.status import payment_set_status
from payments.finance.selectors import unallocated_payments
from payments.locks import lock_payments
from payments.models import (
    CryptoPayment,
    LedgerTransaction,
    PaymentStatus,
    ReviewReason,
    TransactionKind,
    TransferStatus,
)
from tests.payments.watcher.conftest import units
from tests.states import payment_walk

URL = reverse("payments:finance_unallocated")


def row(html: str, payment) -> str:
    match = re.search(rf'<tr data-payment="{payment.pk}"[^>]*>.*?</tr>', html, re.S)
    assert match, f"{payment.reference} is not listed"
    return match.group(0)


def field(html: str, name: str) -> str:
    return re.search(rf'data-field="{name}"[^>]*>(.*?)</(?:td|dd|p)>', html, re.S).group(1).strip()


def to_review(payment, reason=ReviewReason.UNDERPAID):
    with transaction.atomic():
        payment_set_status(
            lock_payments([payment.pk])[payment.pk],
            to_status=PaymentStatus.NEEDS_REVIEW,
            review_reason=reason,
            reason="underpaid at expiry",
        )


@pytest.fixture
def top_up(local_network, make_customer):
    def make(email, amount="50.00") -> CryptoPayment:
        return payment_create_top_up(
            customer=make_customer(email=email),
            amount_usd=Decimal(amount),
            network_key="local",
            asset_symbol="tUSDC",
        )

    return make


@pytest.fixture
def holdings(top_up, transfer):
    """Four payments: one still open with 20.00 confirmed of 50.00, one under review holding
    30.00, one closed holding 7.50 (stranded: nobody will act on it), one fully allocated."""
    open_one = top_up("open@example.com")
    transfer(open_one, units=units("20.00"), status=TransferStatus.CONFIRMED)
    in_review = top_up("review@example.com")
    transfer(in_review, units=units("30.00"), status=TransferStatus.CONFIRMED)
    to_review(in_review)
    stranded = top_up("stranded@example.com")
    transfer(stranded, units=units("7.50"), status=TransferStatus.CONFIRMED)
    payment_walk(stranded, PaymentStatus.CLOSED)  # closed without the money: stranded
    allocated = top_up("done@example.com", "20.00")
    transfer(allocated, status=TransferStatus.CONFIRMED)  # paid in full: credited
    return {
        "open": open_one,
        "review": in_review,
        "stranded": stranded,
        "allocated": allocated,
    }


def test_finance_sees_the_balance_and_every_payment_holding_money(finance_client, holdings):
    response = finance_client.get(URL)

    assert response.status_code == 200
    html = response.content.decode()
    assert field(html, "balance") == "57.50 USD"
    assert field(html, "on-payments") == "57.50 USD"
    assert 'data-field="mismatch"' not in html
    assert "3 payments hold unallocated money." in html

    line = row(html, holdings["open"])
    assert holdings["open"].reference in line
    assert field(line, "customer") == "open@example.com"
    assert field(line, "status") == "Transfer seen, confirming"
    assert field(line, "unallocated") == "20.00 USD"
    assert field(line, "who-acts") == "The watcher (payment still open)"

    line = row(html, holdings["review"])
    assert field(line, "status") == "Under review · Underpaid"
    assert field(line, "unallocated") == "30.00 USD"
    assert field(line, "who-acts") == "The operators (under review)"

    line = row(html, holdings["stranded"])
    assert "data-stranded" in line
    assert field(line, "status") == "Closed"
    assert field(line, "unallocated") == "7.50 USD"
    assert "Nobody: stranded" in line
    assert "1 payment holds money that nobody will act on." in html

    assert f'data-payment="{holdings["allocated"].pk}"' not in html
    assert "done@example.com" not in html


def test_each_payment_shows_since_when_its_money_waits(finance_client, holdings):
    html = finance_client.get(URL).content.decode()
    for payment in (holdings["open"], holdings["review"], holdings["stranded"]):
        receipt = LedgerTransaction.objects.get(
            kind=TransactionKind.CRYPTO_RECEIPT, payment=payment
        )
        since = field(row(html, payment), "since")
        assert f'<time datetime="{receipt.created_at.isoformat()}">' in since


def test_the_longest_waiting_money_comes_first(holdings):
    listed = list(unallocated_payments())
    assert [p.pk for p in listed] == [
        holdings["open"].pk,
        holdings["review"].pk,
        holdings["stranded"].pk,
    ]
    assert [p.stranded for p in listed] == [False, False, True]


def test_money_that_arrives_after_an_allocation_waits_since_it_arrived(top_up, transfer, operator):
    """Refunded (marked invalid), then paid again: it waits since the second receipt, not
    since the first."""
    payment = top_up("again@example.com")
    transfer(payment, units=units("10.00"), status=TransferStatus.CONFIRMED)
    to_review(payment)
    payment_mark_invalid(payment_id=payment.pk, actor=operator, reason="sent back by bank")
    transfer(payment, units=units("5.00"), status=TransferStatus.CONFIRMED)

    (listed,) = unallocated_payments()
    receipts = LedgerTransaction.objects.filter(
        kind=TransactionKind.CRYPTO_RECEIPT, payment=payment
    ).order_by("pk")
    assert (listed.pk, listed.status, listed.unallocated) == (
        payment.pk,
        PaymentStatus.NEEDS_REVIEW,
        Decimal("5.00"),
    )
    assert listed.unallocated_since == receipts[1].created_at != receipts[0].created_at


def test_a_balance_that_differs_from_the_payments_is_pointed_out(finance_client, holdings):
    CryptoPayment.objects.filter(pk=holdings["open"].pk).update(allocated_usd=Decimal("20.00"))

    html = finance_client.get(URL).content.decode()

    assert field(html, "balance") == "57.50 USD"
    assert field(html, "on-payments") == "37.50 USD"
    assert "differs from what the payments hold" in field(html, "mismatch")
    assert f'data-payment="{holdings["open"].pk}"' not in html


def test_nothing_held_says_so(finance_client):
    html = finance_client.get(URL).content.decode()
    assert field(html, "balance") == "0.00 USD"
    assert "No payment holds unallocated money." in html


def test_an_operator_in_finance_gets_a_link_to_the_payment_page(
    finance_user, finance_client, holdings
):
    ops_url = reverse("payments:ops_payment", kwargs={"payment_id": holdings["open"].pk})
    assert ops_url not in finance_client.get(URL).content.decode()  # a page they cannot open

    finance_user.groups.add(Group.objects.get_or_create(name="operators")[0])
    html = Client()
    html.force_login(finance_user)
    line = row(html.get(URL).content.decode(), holdings["open"])
    assert f'<a href="{ops_url}">{holdings["open"].reference}</a>' in line


@pytest.mark.parametrize("group", [None, "operators"])
def test_customers_and_operators_are_refused(make_customer, group):
    user = make_customer(email="someone@example.com")
    if group:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    browser = Client()
    browser.force_login(user)
    assert browser.get(URL).status_code == 403


def count_queries(client) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(URL)
    assert response.status_code == 200
    return len(queries)


def test_the_query_count_is_the_same_for_1_and_50_payments(finance_client, top_up, transfer):
    def add(count):
        for number in range(count):
            payment = top_up(f"holder-{count}-{number}@example.com")
            transfer(payment, units=units("1.00"), status=TransferStatus.CONFIRMED)

    add(1)
    with_one = count_queries(finance_client)
    add(49)
    with_fifty = count_queries(finance_client)

    # The session comes from the cache (Redis): user with groups (guard, navigation and links
    # share it), count, the page's rows, the account's balance, the payments' total
    assert with_one == with_fifty == 5
    assert "50 payments hold unallocated money." in finance_client.get(URL).content.decode()


def test_the_report_shows_the_money_checks_with_their_columns(finance_client, holdings):
    """The closed payment's 7.50 is stranded; a transfer the ledger never got is listed."""
    from payments.models import ReconciliationRun
    from tests.payments.finance.test_reconciliation_money import unsettled_confirmed_transfer

    missing = unsettled_confirmed_transfer(holdings["review"], units("3.00"))
    day = {"date_from": "2026-01-01", "date_to": "2026-01-01"}

    response = finance_client.post(reverse("payments:finance_reconciliation"), day, follow=True)

    html = response.content.decode()
    assert ReconciliationRun.objects.get().ok is False
    chain = re.search(r'<article data-check="receipts_vs_chain">.*?</article>', html, re.S)[0]
    assert "differ from the transfers confirmed on chain" in chain
    assert '<th scope="col">Confirmed on chain (USD)</th>' in chain
    # Everything received (allocated or not) in the ledger; on chain 3.00 more.
    assert re.search(
        r"<td>Local test chain</td>\s*<td>tUSDC</td>\s*"
        r"<td>77.50</td>\s*<td>80.50</td>\s*<td>-3.00</td>",
        chain,
    )
    transfer = re.search(r'<article data-check="transfer_not_in_ledger">.*?</article>', html, re.S)
    assert missing.tx_hash in transfer[0] and holdings["review"].reference in transfer[0]
    stranded = re.search(r'<article data-check="stranded">.*?</article>', html, re.S)[0]
    assert "nobody will act on" in stranded
    assert holdings["stranded"].reference in stranded and "stranded@example.com" in stranded
    assert "<td>Closed</td>" in stranded and "<td>7.50</td>" in stranded
