"""Finance's withdrawal pages: the queue, a withdrawal's page with its history, approval with
the second factor asked again, rejection with a reason, the transaction hash."""

from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from payments.models import WithdrawalEvent, WithdrawalStatus
from tests.mfa_fixtures import enrol_totp, recovery_codes, totp_code, wrong_code

from .conftest import balance_of, pending_total

pytestmark = pytest.mark.usefixtures("local_network")

QUEUE = reverse("payments:finance_withdrawals")


def page_of(withdrawal) -> str:
    return reverse("payments:finance_withdrawal", kwargs={"withdrawal_id": withdrawal.pk})


def action(withdrawal, name: str) -> str:
    return reverse(
        "payments:finance_withdrawal_action",
        kwargs={"withdrawal_id": withdrawal.pk, "action": name},
    )


def status_of(withdrawal) -> str:
    withdrawal.refresh_from_db()
    return withdrawal.status


def test_the_queue_lists_what_waits_and_the_nav_links_to_it(finance_client, request_withdrawal):
    withdrawal = request_withdrawal("20.00")
    dashboard = finance_client.get(reverse("payments:finance_dashboard")).content.decode()
    assert f'href="{QUEUE}"' in dashboard

    html = finance_client.get(QUEUE).content.decode()

    assert withdrawal.reference in html
    assert withdrawal.customer.email in html
    assert "20.00 USD" in html
    assert "To decide (1)" in html
    assert withdrawal.reference not in finance_client.get(QUEUE + "?show=paid").content.decode()


def test_approval_asks_for_the_code_again(finance_client, finance_user, request_withdrawal):
    secret = enrol_totp(finance_user)
    withdrawal = request_withdrawal("20.00")
    page = finance_client.get(page_of(withdrawal)).content.decode()
    assert 'name="mfa_code"' in page

    missing = finance_client.post(action(withdrawal, "approve"), {})
    assert missing.status_code == 400
    assert "Enter the current code" in missing.content.decode()
    wrong = finance_client.post(action(withdrawal, "approve"), {"mfa_code": wrong_code(secret)})
    assert wrong.status_code == 400
    assert "That code is not valid" in wrong.content.decode()
    assert status_of(withdrawal) == WithdrawalStatus.REQUESTED

    done = finance_client.post(action(withdrawal, "approve"), {"mfa_code": totp_code(secret)})

    assert done.status_code == 302
    assert status_of(withdrawal) == WithdrawalStatus.APPROVED
    assert withdrawal.decided_by == finance_user
    html = finance_client.get(page_of(withdrawal)).content.decode()
    assert "Requested → Approved, waiting for the transfer" in html
    assert "Fiona Nance (finance@example.com)" in html
    assert 'name="tx_hash"' in html


def test_a_recovery_code_approves_too(finance_client, finance_user, request_withdrawal):
    enrol_totp(finance_user)
    withdrawal = request_withdrawal("20.00")
    code = recovery_codes(finance_user)[0]
    assert finance_client.post(action(withdrawal, "approve"), {"mfa_code": code}).status_code == 302
    assert status_of(withdrawal) == WithdrawalStatus.APPROVED


def test_rejection_needs_a_reason_and_returns_the_amount(
    finance_client, funded, request_withdrawal
):
    withdrawal = request_withdrawal("20.00")
    refused = finance_client.post(action(withdrawal, "reject"), {"reason": "   "})
    assert refused.status_code == 400
    assert "Give the reason for the rejection" in refused.content.decode()
    assert status_of(withdrawal) == WithdrawalStatus.REQUESTED
    assert balance_of(funded) == Decimal("80.00")

    done = finance_client.post(action(withdrawal, "reject"), {"reason": "Wallet on a list"})

    assert done.status_code == 302
    assert status_of(withdrawal) == WithdrawalStatus.REJECTED
    assert balance_of(funded) == Decimal("100.00")
    assert pending_total() == Decimal("0.00")
    html = finance_client.get(page_of(withdrawal)).content.decode()
    assert "Wallet on a list" in html
    assert "This withdrawal is final." in html


@pytest.mark.parametrize(
    "bad_hash", ["0x1234", "0x" + "g" * 64, "0x" + "١" * 64, "", "ab" * 33, "0x" + "a" * 65]
)
def test_a_malformed_hash_is_refused_on_its_field(finance_client, approved, bad_hash):
    withdrawal = approved("20.00")
    response = finance_client.post(action(withdrawal, "hash"), {"tx_hash": bad_hash})
    assert response.status_code == 400
    assert "64 hexadecimal characters" in response.content.decode()
    assert status_of(withdrawal) == WithdrawalStatus.APPROVED
    assert withdrawal.tx_hash == ""


def test_a_reused_hash_is_refused_with_a_clear_message(finance_client, approved):
    first, second = approved("20.00"), approved("30.00")
    tx_hash = "0x" + "cd" * 32
    assert finance_client.post(action(first, "hash"), {"tx_hash": tx_hash}).status_code == 302
    assert status_of(first) == WithdrawalStatus.SENT

    response = finance_client.post(action(second, "hash"), {"tx_hash": tx_hash.upper()[2:]})
    assert response.status_code == 400  # not 0x-prefixed: refused by the form
    response = finance_client.post(action(second, "hash"), {"tx_hash": "0x" + "CD" * 32})

    assert response.status_code == 400
    assert f"already entered for withdrawal {first.reference}" in response.content.decode()
    assert status_of(second) == WithdrawalStatus.APPROVED


def test_an_unknown_action_or_withdrawal_is_not_found(finance_client, request_withdrawal):
    withdrawal = request_withdrawal()
    assert finance_client.post(action(withdrawal, "pay"), {}).status_code == 404
    missing = reverse("payments:finance_withdrawal", kwargs={"withdrawal_id": 10**9})
    assert finance_client.get(missing).status_code == 404


def test_a_decision_out_of_order_is_refused_clearly(finance_client, finance_user, approved):
    withdrawal = approved("20.00")
    secret = enrol_totp(finance_user)
    response = finance_client.post(action(withdrawal, "approve"), {"mfa_code": totp_code(secret)})
    assert response.status_code == 409
    assert "cannot change to that status now" in response.content.decode()
    assert WithdrawalEvent.objects.filter(withdrawal=withdrawal).count() == 2


def test_a_customer_cannot_reach_the_finance_pages(funded, request_withdrawal):
    withdrawal = request_withdrawal()
    browser = Client()
    browser.force_login(funded)
    assert browser.get(QUEUE).status_code == 403
    assert browser.get(page_of(withdrawal)).status_code == 403
    for name in ("approve", "reject", "hash", "take-back", "check"):
        response = browser.post(action(withdrawal, name), {"reason": "x", "mfa_code": "000000"})
        assert response.status_code == 403
    assert status_of(withdrawal) == WithdrawalStatus.REQUESTED
    assert balance_of(funded) == Decimal("75.00")


def test_anonymous_visitors_go_to_the_login_page(client, request_withdrawal):
    withdrawal = request_withdrawal()
    assert client.get(QUEUE).status_code == 302
    assert client.post(action(withdrawal, "reject"), {"reason": "x"}).status_code == 302
    assert status_of(withdrawal) == WithdrawalStatus.REQUESTED


def count_queries(browser, url) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        assert browser.get(url).status_code == 200
    return len(queries)


def test_the_queue_costs_the_same_queries_for_1_and_30_withdrawals(
    finance_client, request_withdrawal, make_customer, credit
):
    request_withdrawal("10.00")
    with_one = count_queries(finance_client, QUEUE)
    for _ in range(29):
        someone = make_customer()
        credit(someone, "20.00")
        request_withdrawal("10.00", who=someone)
    assert count_queries(finance_client, QUEUE) == with_one
