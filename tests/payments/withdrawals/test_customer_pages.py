"""The customer's withdrawal pages: the form, its confirmation, the withdrawal's own page; bad
input is refused with a message on the field, answers 400 and changes nothing."""

from decimal import Decimal
from uuid import uuid4

import pytest
from django.test import Client
from django.urls import reverse

from payments.models import LedgerTransaction, Withdrawal, WithdrawalStatus
from payments.withdrawals.services import withdrawal_reject

from .conftest import CUSTOMER_WALLET, balance_of, pending_total

pytestmark = pytest.mark.usefixtures("local_network")

WITHDRAW = reverse("payments:withdraw")
SHORT_ADDRESS = "0x3c44cdddb6a900fa2b585dd299e03d12fa4293b"  # 39 characters
FULLWIDTH_ADDRESS = "0x３c44cdddb6a900fa2b585dd299e03d12fa4293bc"  # a full-width digit


@pytest.fixture
def browser(funded) -> Client:
    client = Client()
    client.force_login(funded)
    return client


def form_data(**changes) -> dict:
    data = {
        "amount": "25.00",
        "stablecoin": "local:tUSDC",
        "to_address": CUSTOMER_WALLET.lower(),
        "request_key": str(uuid4()),
    }
    data.update(changes)
    return data


def assert_nothing_changed(customer):
    assert balance_of(customer) == Decimal("100.00")
    assert pending_total() == Decimal("0.00")
    assert not Withdrawal.objects.exists()


def test_the_statement_links_to_the_withdrawal_form(browser):
    html = browser.get(reverse("payments:statement")).content.decode()
    assert f'href="{WITHDRAW}"' in html
    page = browser.get(WITHDRAW)
    assert page.status_code == 200
    text = page.content.decode()
    assert "Your balance: 100.00 USD" in text
    assert "tUSDC on Local test chain" in text


def test_the_form_asks_for_a_confirmation_then_holds_the_amount(browser, funded):
    data = form_data()
    confirm = browser.post(WITHDRAW, {**data, "step": "confirm"})

    assert confirm.status_code == 200
    html = confirm.content.decode()
    assert "Confirm your withdrawal" in html
    assert "25.000000 tUSDC" in html
    assert CUSTOMER_WALLET in html  # shown checksummed
    assert "75.00 USD" in html  # the balance after the request
    assert "cannot be taken back" in html
    assert_nothing_changed(funded)  # nothing happens before the confirmation

    done = browser.post(WITHDRAW, {**data, "to_address": CUSTOMER_WALLET, "step": "send"})

    withdrawal = Withdrawal.objects.get()
    assert done.status_code == 302
    assert done["Location"] == reverse(
        "payments:withdrawal_detail", kwargs={"withdrawal_id": withdrawal.pk}
    )
    assert balance_of(funded) == Decimal("75.00")
    assert pending_total() == Decimal("25.00")
    # The same confirmation sent again (a double click) makes no second withdrawal.
    again = browser.post(WITHDRAW, {**data, "to_address": CUSTOMER_WALLET, "step": "send"})
    assert again.status_code == 302
    assert Withdrawal.objects.count() == 1
    assert balance_of(funded) == Decimal("75.00")
    statement = browser.get(reverse("payments:statement")).content.decode()
    assert f"Held for withdrawal {withdrawal.reference}" in statement
    assert "Withdrawals in progress" in statement


def test_change_it_brings_the_form_back_filled_in(browser, funded):
    page = browser.post(WITHDRAW, {**form_data(amount="30.00"), "step": "edit"})
    assert page.status_code == 200
    assert 'value="30.00"' in page.content.decode()
    assert_nothing_changed(funded)


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"amount": "9.99"}, "amount", "The minimum withdrawal is 10.00 USD."),
        ({"amount": "100.01"}, "amount", "you can withdraw at most that"),
        ({"amount": "-20"}, "amount", "The minimum withdrawal is 10.00 USD."),
        ({"amount": "２０"}, "amount", "as a number, such as 25.00"),
        ({"amount": "٢٠.00"}, "amount", "as a number, such as 25.00"),
        ({"amount": "1e2"}, "amount", "as a number, such as 25.00"),
        ({"amount": "20.001"}, "amount", "two decimal places"),
        ({"amount": ""}, "amount", "Enter the amount in USD."),
        ({"to_address": "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293Bc"}, "to_address", "checksum"),
        ({"to_address": SHORT_ADDRESS}, "to_address", "40 hexadecimal"),
        ({"to_address": FULLWIDTH_ADDRESS}, "to_address", "40 hexadecimal"),
        ({"to_address": "0x" + "0" * 40}, "to_address", "zero address"),
        ({"to_address": ""}, "to_address", "Enter the address of your wallet."),
        ({"stablecoin": "ethereum:USDC"}, "stablecoin", "Choose a stablecoin and network"),
        ({"stablecoin": "local:USDT"}, "stablecoin", "Choose a stablecoin and network"),
        ({"request_key": "not-a-key"}, "request_key", "altered"),
        ({"request_key": ""}, "request_key", "altered"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("step", ["confirm", "send"])
def test_bad_input_is_refused_on_its_field_and_changes_nothing(
    browser, funded, changes, field, message, step
):
    response = browser.post(WITHDRAW, {**form_data(**changes), "step": step})

    assert response.status_code == 400
    errors = response.context["form"].errors
    assert field in errors
    assert message in " ".join(errors[field])
    assert message in response.content.decode().replace("&#x27;", "'")
    assert_nothing_changed(funded)


def test_a_disabled_network_is_refused(browser, funded, settings):
    settings.PAYMENT_RPC_URLS = dict.fromkeys(settings.PAYMENT_RPC_URLS)
    response = browser.post(WITHDRAW, {**form_data(), "step": "send"})
    assert response.status_code == 400
    assert "stablecoin" in response.context["form"].errors
    assert_nothing_changed(funded)
    assert "not available right now" in browser.get(WITHDRAW).content.decode()


def test_a_post_without_csrf_changes_nothing(funded):
    client = Client(enforce_csrf_checks=True)
    client.force_login(funded)
    response = client.post(WITHDRAW, {**form_data(), "step": "send"})
    assert response.status_code == 403
    assert_nothing_changed(funded)


def test_anonymous_visitors_are_sent_to_the_login_page(client):
    response = client.get(WITHDRAW)
    assert response.status_code == 302
    assert "/login/" in response["Location"]


def test_the_withdrawal_page_shows_its_state_and_refreshes_while_pending(
    browser, request_withdrawal, finance_user
):
    withdrawal = request_withdrawal("20.00")
    url = reverse("payments:withdrawal_detail", kwargs={"withdrawal_id": withdrawal.pk})
    status_url = reverse("payments:withdrawal_status", kwargs={"withdrawal_id": withdrawal.pk})

    html = browser.get(url).content.decode()
    assert "Requested" in html
    assert "The amount is held from your balance" in html
    assert f'hx-get="{status_url}"' in html
    assert "20.000000 tUSDC" in html
    partial = browser.get(status_url, headers={"HX-Request": "true"})
    assert partial.status_code == 200
    assert 'id="withdrawal-status"' in partial.content.decode()
    assert "<html" not in partial.content.decode()

    withdrawal_reject(withdrawal_id=withdrawal.pk, actor=finance_user, reason="Sanctioned address")
    html = browser.get(url).content.decode()
    assert "Rejected" in html
    assert "Reason: Sanctioned address" in html
    assert "hx-get" not in html  # final: the page stops asking
    statement = browser.get(reverse("payments:statement")).content.decode()
    assert f"Withdrawal {withdrawal.reference} rejected: the amount is back" in statement


def test_another_customers_withdrawal_is_not_found(request_withdrawal, make_customer):
    withdrawal = request_withdrawal()
    stranger = Client()
    stranger.force_login(make_customer())
    for name in ("payments:withdrawal_detail", "payments:withdrawal_status"):
        response = stranger.get(reverse(name, kwargs={"withdrawal_id": withdrawal.pk}))
        assert response.status_code == 404
        assert withdrawal.to_address not in response.content.decode()


def test_the_pages_are_in_italian_too(browser, request_withdrawal):
    withdrawal = request_withdrawal()
    browser.cookies["django_language"] = "it"
    html = browser.get(WITHDRAW, headers={"Accept-Language": "it"}).content.decode()
    assert "Preleva" in html
    url = reverse("payments:withdrawal_detail", kwargs={"withdrawal_id": withdrawal.pk})
    assert "Prelievo" in browser.get(url, headers={"Accept-Language": "it"}).content.decode()


def test_the_ledger_holds_one_request_per_withdrawal(browser, funded):
    data = form_data()
    browser.post(WITHDRAW, {**data, "step": "send"})
    browser.post(WITHDRAW, {**data, "step": "send"})
    assert LedgerTransaction.objects.filter(kind="withdrawal_request").count() == 1
    assert Withdrawal.objects.get().status == WithdrawalStatus.REQUESTED
