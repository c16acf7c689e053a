"""Reconciliation and the finance console include withdrawals: held, returned and paid out
money keeps the trial balance at zero and shows no discrepancy; a posting that does not match
a withdrawal's status does."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from payments.chain import local
from payments.chain.local import PAYER_KEY
from payments.finance.services import reconciliation_run
from payments.ledger.services.posting import customer_account, ledger_post, system_account
from payments.models import LedgerAccountKind, TransactionKind
from payments.withdrawals.services import withdrawal_check, withdrawal_enter_hash, withdrawal_reject

from .conftest import CUSTOMER_WALLET


def run():
    today = timezone.now().date()
    return reconciliation_run(period_start=today - timedelta(days=1), period_end=today)


@pytest.fixture
def withdrawals_of_every_kind(chain, request_withdrawal, approved, finance_user):
    """One requested (20.00), one rejected (10.00) and one paid on chain (15.00)."""
    request_withdrawal("20.00")
    rejected = request_withdrawal("10.00")
    withdrawal_reject(withdrawal_id=rejected.pk, actor=finance_user, reason="Duplicate")
    paid = approved("15.00")
    tx_hash = local.transfer(chain.w3, chain.token_address, PAYER_KEY, CUSTOMER_WALLET, 15_000_000)
    withdrawal_enter_hash(withdrawal_id=paid.pk, actor=finance_user, tx_hash=tx_hash)
    chain.mine(2)
    assert withdrawal_check(withdrawal_id=paid.pk) == "paid"
    return paid


def test_withdrawals_reconcile_with_no_discrepancy(withdrawals_of_every_kind):
    report = run()

    assert report.discrepancies == []
    assert report.ok
    assert report.trial_balance == Decimal("0.00")
    totals = report.totals_by_kind
    assert totals[TransactionKind.WITHDRAWAL_REQUEST] == {"count": 3, "total": "45.00"}
    assert totals[TransactionKind.WITHDRAWAL_RETURN] == {"count": 1, "total": "10.00"}
    assert totals[TransactionKind.WITHDRAWAL_PAID] == {"count": 1, "total": "15.00"}


def test_a_posting_that_does_not_match_the_status_is_a_discrepancy(
    withdrawals_of_every_kind, request_withdrawal, finance_user, finance_client
):
    pending = request_withdrawal("12.00")
    # Money returned to the balance while the withdrawal is still requested: wrong.
    ledger_post(
        kind=TransactionKind.WITHDRAWAL_RETURN,
        lines=[
            (system_account(LedgerAccountKind.WITHDRAWALS_PENDING), Decimal("-12.00")),
            (customer_account(pending.customer), Decimal("12.00")),
        ],
        memo="A return posted by hand",
        idempotency_key="test:return-by-hand",
        actor=finance_user,
        withdrawal=pending,
    )

    report = run()

    assert report.trial_balance == Decimal("0.00")
    (found,) = report.discrepancies
    assert found["check"] == "withdrawal_ledger"
    assert found["rows"] == [
        {
            "withdrawal_id": pending.pk,
            "withdrawal_reference": pending.reference,
            "status": "requested",
            "amount": "12.00",
            "held": "0.00",
            "paid": "0.00",
            "taken": "0.00",
        }
    ]
    url = reverse("payments:finance_reconciliation") + f"?run={report.pk}"
    html = finance_client.get(url).content.decode()
    assert "Withdrawals whose postings in the ledger do not match their status" in html
    assert pending.reference in html


def test_paid_out_money_without_a_paid_withdrawal_is_a_discrepancy(
    withdrawals_of_every_kind, finance_user
):
    paid = withdrawals_of_every_kind
    ledger_post(
        kind=TransactionKind.WITHDRAWAL_PAID,
        lines=[
            (system_account(LedgerAccountKind.WITHDRAWALS_PENDING), Decimal("-1.00")),
            (
                system_account(LedgerAccountKind.WITHDRAWALS_PAID, asset="tUSDC", network="local"),
                Decimal("1.00"),
            ),
        ],
        memo="Paid twice by hand",
        idempotency_key="test:paid-by-hand",
        withdrawal=paid,
    )

    checks = {d["check"]: d["rows"] for d in run().discrepancies}

    assert checks["withdrawals_paid"] == [
        {
            "network": "local",
            "asset": "tUSDC",
            "ledger": "16.00",
            "withdrawals": "15.00",
            "difference": "1.00",
        }
    ]
    assert checks["withdrawal_ledger"][0]["withdrawal_reference"] == paid.reference


def test_the_console_shows_the_withdrawal_totals(withdrawals_of_every_kind, finance_client):
    run()
    html = finance_client.get(reverse("payments:finance_dashboard")).content.decode()
    assert 'data-field="withdrawals-pending">20.00 USD' in html
    assert 'data-field="withdrawals-paid-local-tUSDC">15.00 USD' in html
    assert "1 to decide, 0 to send, 0 checking on chain" in html
    report = finance_client.get(reverse("payments:finance_reconciliation")).status_code
    assert report == 200
