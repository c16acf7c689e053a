"""Finance credits and debits a customer's balance by hand, with a reason."""

import re
from decimal import Decimal
from uuid import uuid4

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from payments.models import LedgerAccount, LedgerAccountKind, LedgerEntry, LedgerTransaction
from tests.mfa_fixtures import enrol_totp, totp_code

URL = reverse("payments:finance_adjustment")


def balance_of(user) -> Decimal | None:
    return (
        LedgerAccount.objects.filter(kind=LedgerAccountKind.CUSTOMER_BALANCE, customer=user)
        .values_list("balance", flat=True)
        .first()
    )


def form_data(customer, **overrides) -> dict:
    data = {
        "customer_email": customer.email,
        "direction": "credit",
        "amount": "25.00",
        "reason": "Bank transfer received on 3 March",
        "request_key": str(uuid4()),
    }
    data.update(overrides)
    return {key: value for key, value in data.items() if value is not None}


def test_the_form_carries_a_fresh_request_key_each_time_it_is_shown(finance_client):
    keys = [
        re.search(r'name="request_key" value="([0-9a-f-]{36})"', html).group(1)
        for html in (finance_client.get(URL).content.decode() for _ in range(2))
    ]
    assert keys[0] != keys[1]


def test_the_form_can_be_prefilled_with_an_email(finance_client, customer):
    html = finance_client.get(URL, {"email": customer.email}).content.decode()
    assert f'value="{customer.email}"' in html


def test_a_credit_raises_the_balance_and_shows_in_the_journal(
    finance_client, finance_user, customer
):
    response = finance_client.post(URL, form_data(customer, amount="25.50"))

    assert response.status_code == 302
    assert (
        response["Location"]
        == reverse("payments:finance_journal") + "?customer=grace%40example.com"
    )
    assert balance_of(customer) == Decimal("25.50")
    posted = LedgerTransaction.objects.get()
    assert posted.kind == "adjustment"
    assert posted.actor == finance_user
    assert posted.memo == "Bank transfer received on 3 March"

    page = finance_client.get(response["Location"])
    html = page.content.decode()
    assert f"Adjustment #{posted.pk} is posted to the balance of grace@example.com." in html
    row = re.search(rf'<tr data-transaction="{posted.pk}">.*?</tr>', html, re.S).group(0)
    assert "Bank transfer received on 3 March" in row
    assert "finance@example.com" in row
    assert "+25.50" in row
    assert "-25.50" in row  # the adjustments account's side


def test_a_debit_lowers_the_balance(finance_client, customer, credit):
    credit(customer, "100.00")
    response = finance_client.post(
        URL, form_data(customer, direction="debit", amount="40", reason="Duplicate top-up")
    )
    assert response.status_code == 302
    assert balance_of(customer) == Decimal("60.00")
    debit = LedgerTransaction.objects.get(memo="Duplicate top-up")
    amounts = {entry.account.kind: entry.amount for entry in debit.entries.all()}
    assert amounts == {"customer_balance": Decimal("-40.00"), "adjustments": Decimal("40.00")}
    html = finance_client.get(response["Location"]).content.decode()
    row = re.search(rf'<tr data-transaction="{debit.pk}">.*?</tr>', html, re.S).group(0)
    assert "-40.00" in row
    assert "finance@example.com" in row


def test_a_debit_beyond_the_balance_is_refused_and_nothing_is_written(
    finance_client, customer, credit
):
    credit(customer, "10.00")
    before = LedgerTransaction.objects.count()

    response = finance_client.post(URL, form_data(customer, direction="debit", amount="50.00"))

    assert response.status_code == 400
    html = response.content.decode()
    assert "The balance is 10.00 USD; 50.00 USD are needed. Nothing was charged." in html
    assert LedgerTransaction.objects.count() == before
    assert balance_of(customer) == Decimal("10.00")


BAD_AMOUNTS = {
    "0": "Enter an amount greater than zero",
    "0.00": "Enter an amount greater than zero",
    "-5": "Enter an amount greater than zero",
    "-0.01": "Enter an amount greater than zero",
    "abc": "Enter the amount as a number, such as 25.00.",
    "12,50": "Enter the amount as a number, such as 25.00.",
    "NaN": "Enter the amount as a number, such as 25.00.",
    "Infinity": "Enter the amount as a number, such as 25.00.",
    "12.345": "Enter at most two decimal places (cents).",
    "0.001": "Enter at most two decimal places (cents).",
    "1000000.01": "An adjustment is at most 1,000,000.00 USD.",
    "1e12": "Enter the amount as a number, such as 25.00.",  # digits only (accounts/fields.py)
    "99999999999999999999999999": "An adjustment is at most 1,000,000.00 USD.",
    "": "Enter the amount in USD.",
}


@pytest.mark.parametrize("amount", BAD_AMOUNTS)
def test_bad_amounts_are_refused_with_a_field_message(finance_client, customer, amount):
    response = finance_client.post(URL, form_data(customer, amount=amount))
    assert response.status_code == 400
    assert BAD_AMOUNTS[amount] in response.content.decode()
    assert response.context["form"].errors["amount"]
    assert LedgerTransaction.objects.count() == 0
    assert LedgerEntry.objects.count() == 0


def test_the_largest_adjustment_is_accepted(finance_client, finance_user, customer):
    code = totp_code(enrol_totp(finance_user))  # above the step-up threshold
    response = finance_client.post(URL, form_data(customer, amount="1000000.00", mfa_code=code))
    assert response.status_code == 302
    assert balance_of(customer) == Decimal("1000000.00")


BAD_FIELDS = [
    ("reason", "", "Give the reason for this adjustment"),
    ("reason", "   ", "Give the reason for this adjustment"),
    ("reason", "x" * 501, "Keep the reason to 500 characters (it has 501)."),
    ("customer_email", "nobody@example.com", "No customer has this email address."),
    ("customer_email", "not-an-email", "Enter a valid email address."),
    ("customer_email", "", "Enter the customer&#x27;s email address."),
    ("direction", "refund", "Choose credit or debit."),
    ("direction", "", "Choose credit or debit."),
    ("request_key", "not-a-uuid", "This form is incomplete or was altered."),
    ("request_key", "", "This form is incomplete or was altered."),
    ("request_key", "1' OR '1'='1", "This form is incomplete or was altered."),
]


@pytest.mark.parametrize(("field", "value", "message"), BAD_FIELDS)
def test_bad_fields_are_refused_with_a_field_message(
    finance_client, customer, field, value, message
):
    response = finance_client.post(URL, form_data(customer, **{field: value}))
    assert response.status_code == 400
    assert message in response.content.decode()
    assert field in response.context["form"].errors
    assert LedgerTransaction.objects.count() == 0


def test_a_damaged_request_key_comes_back_renewed(finance_client, customer):
    response = finance_client.post(URL, form_data(customer, request_key="not-a-uuid"))
    html = response.content.decode()
    assert 'value="not-a-uuid"' not in html
    assert re.search(r'name="request_key" value="[0-9a-f-]{36}"', html)


def test_the_email_is_matched_whatever_its_case(finance_client, customer):
    response = finance_client.post(URL, form_data(customer, customer_email="GRACE@Example.COM"))
    assert response.status_code == 302
    assert balance_of(customer) == Decimal("25.00")


def test_finance_cannot_adjust_its_own_balance(finance_client, finance_user):
    response = finance_client.post(URL, form_data(finance_user))
    assert response.status_code == 400
    assert "You cannot adjust your own balance" in response.content.decode()
    assert LedgerTransaction.objects.count() == 0


def test_a_post_without_the_csrf_token_is_refused(finance_user, customer):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(finance_user)
    response = browser.post(URL, form_data(customer))
    assert response.status_code == 403
    assert LedgerTransaction.objects.count() == 0
    assert balance_of(customer) is None


def test_a_post_with_the_csrf_token_goes_through(finance_user, customer):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(finance_user)
    html = browser.get(URL).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    response = browser.post(URL, {**form_data(customer), "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert balance_of(customer) == Decimal("25.00")


def test_a_resubmitted_form_posts_one_adjustment(finance_client, customer):
    data = form_data(customer, amount="30.00")

    first = finance_client.post(URL, data)
    second = finance_client.post(URL, data)

    assert first.status_code == second.status_code == 302
    assert LedgerTransaction.objects.count() == 1
    assert balance_of(customer) == Decimal("30.00")
    shown = [str(message) for message in get_messages(second.wsgi_request)]
    assert any("is posted to the balance of grace@example.com" in text for text in shown)


def test_a_reused_key_with_other_values_posts_nothing_new_and_says_so(finance_client, customer):
    data = form_data(customer, amount="30.00")
    finance_client.post(URL, data)

    response = finance_client.post(URL, {**data, "amount": "45.00"})

    assert response.status_code == 400
    assert LedgerTransaction.objects.count() == 1
    assert balance_of(customer) == Decimal("30.00")
    assert "This form was already sent with other values; nothing new was posted." in (
        response.content.decode()
    )


def test_a_refused_debit_can_be_corrected_with_the_same_form(finance_client, customer, credit):
    credit(customer, "10.00")
    data = form_data(customer, direction="debit", amount="50.00")
    assert finance_client.post(URL, data).status_code == 400

    response = finance_client.post(URL, {**data, "amount": "10.00"})

    assert response.status_code == 302
    assert balance_of(customer) == Decimal("0.00")
