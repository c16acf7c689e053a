"""A manual adjustment above FINANCE_STEP_UP_THRESHOLD_USD asks finance for the authenticator
code again; at or below it, it does not. The journal names who posted it."""

import re
from decimal import Decimal
from uuid import uuid4

import pytest
from django.urls import reverse

from payments.models import LedgerAccount, LedgerAccountKind, LedgerTransaction, TransactionKind
from tests.mfa_fixtures import enrol_totp, recovery_codes, totp_code, wrong_code

pytestmark = pytest.mark.django_db

URL = reverse("payments:finance_adjustment")
MISSING = "Enter the current code from your authenticator app to confirm."
INVALID = "That code is not valid. Enter the current 6-digit code from your authenticator app."


def form_data(customer, amount: str, **overrides) -> dict:
    data = {
        "customer_email": customer.email,
        "direction": "credit",
        "amount": amount,
        "reason": "Refund of ticket 4711, approved by the CFO",
        "request_key": str(uuid4()),
    }
    data.update(overrides)
    return data


def balance_of(user) -> Decimal | None:
    return (
        LedgerAccount.objects.filter(kind=LedgerAccountKind.CUSTOMER_BALANCE, customer=user)
        .values_list("balance", flat=True)
        .first()
    )


def refused(response, message: str) -> None:
    assert response.status_code == 400
    assert message in response.content.decode()
    assert response.context["form"].errors["mfa_code"] == [message]
    assert LedgerTransaction.objects.count() == 0


@pytest.fixture
def secret(finance_user) -> str:
    return enrol_totp(finance_user)  # the finance_user fixture enrolled them: their secret


def test_the_form_says_when_the_code_is_needed(finance_client, settings):
    html = finance_client.get(URL).content.decode()
    assert "An adjustment above 500.00 USD also needs the current code" in html
    assert 'name="mfa_code"' in html
    assert re.search(r'<input[^>]*name="mfa_code"[^>]*required', html) is None  # not yet known


def test_above_the_threshold_without_a_code_nothing_is_posted(finance_client, customer):
    refused(finance_client.post(URL, form_data(customer, "500.01")), MISSING)
    assert balance_of(customer) is None


def test_above_the_threshold_a_wrong_code_posts_nothing(finance_client, customer, secret):
    refused(
        finance_client.post(URL, form_data(customer, "750.00", mfa_code=wrong_code(secret))),
        INVALID,
    )


@pytest.mark.parametrize("code", ["abcdef", "１２３４５６", "1" * 65, "' OR 1=1 --"])
def test_above_the_threshold_a_code_that_is_no_code_posts_nothing(finance_client, customer, code):
    refused(finance_client.post(URL, form_data(customer, "750.00", mfa_code=code)), INVALID)


def test_a_debit_above_the_threshold_asks_too(finance_client, customer, credit):
    credit(customer, "2000.00")
    before = LedgerTransaction.objects.count()
    response = finance_client.post(URL, form_data(customer, "1000.00", direction="debit"))
    assert response.status_code == 400
    assert MISSING in response.content.decode()
    assert LedgerTransaction.objects.count() == before
    assert balance_of(customer) == Decimal("2000.00")


def test_above_the_threshold_the_right_code_posts_it_with_the_acting_user(
    finance_client, finance_user, customer, secret
):
    response = finance_client.post(URL, form_data(customer, "750.00", mfa_code=totp_code(secret)))

    assert response.status_code == 302
    posted = LedgerTransaction.objects.get()
    assert (posted.kind, posted.actor) == (TransactionKind.ADJUSTMENT, finance_user)
    assert balance_of(customer) == Decimal("750.00")
    journal = finance_client.get(response["Location"]).content.decode()
    row = re.search(rf'<tr data-transaction="{posted.pk}">.*?</tr>', journal, re.S).group(0)
    assert f'<td data-field="actor">{finance_user.email}</td>' in row


def test_a_recovery_code_confirms_once(finance_client, finance_user, customer, secret):
    code = recovery_codes(finance_user)[0]
    assert finance_client.post(URL, form_data(customer, "600.00", mfa_code=code)).status_code == 302
    assert code not in recovery_codes(finance_user)

    refused_again = finance_client.post(URL, form_data(customer, "600.00", mfa_code=code))
    assert refused_again.status_code == 400
    assert INVALID in refused_again.content.decode()
    assert LedgerTransaction.objects.count() == 1


def test_a_form_wrong_elsewhere_keeps_the_code_unused(finance_client, finance_user, customer):
    code = recovery_codes(finance_user)[0]
    response = finance_client.post(URL, form_data(customer, "600.00", reason="", mfa_code=code))
    assert response.status_code == 400
    assert "mfa_code" not in response.context["form"].errors
    assert code in recovery_codes(finance_user)  # not spent on a form that posted nothing

    fixed = finance_client.post(URL, form_data(customer, "600.00", mfa_code=code))
    assert fixed.status_code == 302
    assert balance_of(customer) == Decimal("600.00")


@pytest.mark.parametrize("amount", ["500.00", "500", "20.00", "0.01"])
def test_at_or_below_the_threshold_no_code_is_asked(finance_client, finance_user, customer, amount):
    response = finance_client.post(URL, form_data(customer, amount))
    assert response.status_code == 302
    assert LedgerTransaction.objects.get().actor == finance_user


def test_at_or_below_the_threshold_a_typed_code_is_not_checked(finance_client, customer):
    response = finance_client.post(URL, form_data(customer, "20.00", mfa_code="000000"))
    assert response.status_code == 302
    assert balance_of(customer) == Decimal("20.00")


def test_the_threshold_comes_from_the_settings(finance_client, customer, settings, secret):
    settings.FINANCE_STEP_UP_THRESHOLD_USD = "100.00"
    assert "above 100.00 USD" in finance_client.get(URL).content.decode()
    refused(finance_client.post(URL, form_data(customer, "100.01")), MISSING)
    ok = finance_client.post(URL, form_data(customer, "100.01", mfa_code=totp_code(secret)))
    assert ok.status_code == 302
