"""The console is for the finance group (and superusers) only."""

from urllib.parse import quote

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from payments.models import LedgerTransaction, ReconciliationRun
from tests.mfa_fixtures import enrol_totp

PAGES = [
    "payments:finance_dashboard",
    "payments:finance_balances",
    "payments:finance_journal",
    "payments:finance_journal_csv",
    "payments:finance_unallocated",
    "payments:finance_adjustment",
    "payments:finance_reconciliation",
]


def adjustment_post(customer) -> dict:
    return {
        "customer_email": customer.email,
        "direction": "credit",
        "amount": "500.00",
        "reason": "Goodwill",
        "request_key": "6f1c1d0e-8a54-4a55-9a53-0c1e4bdf7b1e",
    }


@pytest.mark.parametrize("name", PAGES)
def test_finance_members_open_every_page(finance_client, name):
    assert finance_client.get(reverse(name)).status_code == 200


@pytest.mark.parametrize("name", PAGES)
def test_superusers_open_every_page(make_customer, name):
    admin = make_customer(email="root@example.com", is_superuser=True, is_staff=True)
    enrol_totp(admin)
    browser = Client()
    browser.force_login(admin)
    assert browser.get(reverse(name)).status_code == 200


@pytest.mark.parametrize("name", PAGES)
def test_a_customer_is_refused_with_a_clear_page(customer_http, name):
    response = customer_http.get(reverse(name))
    assert response.status_code == 403
    html = response.content.decode()
    assert "You do not have access to this page" in html
    assert "ask an administrator" in html


@pytest.mark.parametrize("name", PAGES)
def test_an_operator_is_refused_too(make_customer, name):
    operator = make_customer(email="ops@example.com")
    operator.groups.add(Group.objects.get(name="operators"))
    browser = Client()
    browser.force_login(operator)
    assert browser.get(reverse(name)).status_code == 403


@pytest.mark.parametrize("name", PAGES)
def test_anonymous_visitors_are_sent_to_the_login_page(anonymous_http, name):
    url = reverse(name)
    response = anonymous_http.get(url)
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('account_login')}?next={quote(url)}"


def test_a_customer_cannot_post_an_adjustment(customer_http, customer):
    response = customer_http.post(reverse("payments:finance_adjustment"), adjustment_post(customer))
    assert response.status_code == 403
    assert LedgerTransaction.objects.count() == 0


def test_an_anonymous_post_writes_nothing(anonymous_http, customer):
    response = anonymous_http.post(
        reverse("payments:finance_adjustment"), adjustment_post(customer)
    )
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))
    assert LedgerTransaction.objects.count() == 0


def test_a_customer_cannot_run_a_reconciliation(customer_http):
    response = customer_http.post(
        reverse("payments:finance_reconciliation"),
        {"date_from": "2026-01-01", "date_to": "2026-01-31"},
    )
    assert response.status_code == 403
    assert ReconciliationRun.objects.count() == 0


def test_an_inactive_finance_member_is_not_let_in(finance_user, finance_client):
    finance_user.is_active = False
    finance_user.save(update_fields=["is_active"])
    response = finance_client.get(reverse("payments:finance_dashboard"))
    # Django logs an inactive user out: they are anonymous now.
    assert response.status_code == 302
