"""Asking for a withdrawal holds the amount at once; a rejection gives it back."""

from decimal import Decimal
from uuid import uuid4

import pytest

from payments.exceptions import IdempotencyConflict
from payments.models import (
    LedgerTransaction,
    TransactionKind,
    Withdrawal,
    WithdrawalEvent,
    WithdrawalStatus,
)
from payments.withdrawals.services import (
    InvalidWithdrawalTransition,
    OwnWithdrawal,
    WithdrawalAddressError,
    WithdrawalAmountError,
    WithdrawalError,
    WithdrawalNetworkUnavailable,
    withdrawal_approve,
    withdrawal_reject,
    withdrawal_request,
)

from .conftest import CUSTOMER_WALLET, balance_of, pending_total

pytestmark = pytest.mark.usefixtures("local_network")


def test_a_request_moves_the_amount_from_the_balance_to_withdrawals_pending(
    funded, request_withdrawal
):
    withdrawal = request_withdrawal("25.00")

    assert balance_of(funded) == Decimal("75.00")
    assert pending_total() == Decimal("25.00")
    withdrawal.refresh_from_db()
    assert withdrawal.status == WithdrawalStatus.REQUESTED
    assert withdrawal.amount_units == 25_000_000  # tUSDC has 6 decimals, 1:1 to USD
    assert withdrawal.decimals == 6
    assert withdrawal.confirmations_required == 3
    assert withdrawal.to_address == CUSTOMER_WALLET
    (posted,) = LedgerTransaction.objects.filter(withdrawal=withdrawal)
    assert posted.kind == TransactionKind.WITHDRAWAL_REQUEST
    assert posted.actor == funded
    assert sorted(posted.entries.values_list("amount", flat=True)) == [
        Decimal("-25.00"),
        Decimal("25.00"),
    ]
    (event,) = WithdrawalEvent.objects.filter(withdrawal=withdrawal)
    assert (event.from_status, event.to_status, event.actor) == ("", "requested", funded)


def test_a_lower_case_address_is_stored_checksummed(funded, request_withdrawal):
    withdrawal = request_withdrawal(to=CUSTOMER_WALLET.lower())
    assert withdrawal.to_address == CUSTOMER_WALLET
    upper = request_withdrawal(to="0x" + CUSTOMER_WALLET[2:].upper())
    assert upper.to_address == CUSTOMER_WALLET


def test_the_same_request_key_twice_makes_one_withdrawal(funded, request_withdrawal):
    key = str(uuid4())
    first = request_withdrawal("30.00", key=key)
    again = request_withdrawal("30.00", key=key)

    assert again.pk == first.pk
    assert Withdrawal.objects.count() == 1
    assert balance_of(funded) == Decimal("70.00")
    with pytest.raises(IdempotencyConflict):
        request_withdrawal("31.00", key=key)
    assert balance_of(funded) == Decimal("70.00")


@pytest.mark.parametrize(
    ("amount", "to", "network", "error", "text"),
    [
        ("9.99", CUSTOMER_WALLET, "local", WithdrawalAmountError, "minimum withdrawal is 10.00"),
        ("100.01", CUSTOMER_WALLET, "local", WithdrawalAmountError, "at most that"),
        ("10.001", CUSTOMER_WALLET, "local", WithdrawalAmountError, "two decimal places"),
        ("20.00", "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293Bc", "local", WithdrawalAddressError,
         "checksum"),
        ("20.00", "0x3C44", "local", WithdrawalAddressError, "40 hexadecimal"),
        ("20.00", "0x" + "0" * 40, "local", WithdrawalAddressError, "zero address"),
        ("20.00", CUSTOMER_WALLET, "ethereum", WithdrawalNetworkUnavailable, "not available"),
        ("20.00", CUSTOMER_WALLET, "nowhere", WithdrawalNetworkUnavailable, "not available"),
    ],
)  # fmt: skip
def test_a_refused_request_changes_nothing(
    funded, request_withdrawal, amount, to, network, error, text
):
    with pytest.raises(error) as refused:
        request_withdrawal(amount, to=to, network=network)

    assert text in str(refused.value.message)
    assert balance_of(funded) == Decimal("100.00")
    assert pending_total() == Decimal("0.00")
    assert not Withdrawal.objects.exists()
    assert not LedgerTransaction.objects.filter(kind=TransactionKind.WITHDRAWAL_REQUEST).exists()


def test_an_unknown_asset_is_refused(funded):
    with pytest.raises(WithdrawalNetworkUnavailable):
        withdrawal_request(
            customer=funded,
            amount_usd=Decimal("20.00"),
            network="local",
            asset="USDT",
            to_address=CUSTOMER_WALLET,
            request_key=str(uuid4()),
        )
    assert not Withdrawal.objects.exists()


def test_a_deposit_address_of_the_site_is_refused(funded, request_withdrawal, top_up):
    payment = top_up("20.00")
    with pytest.raises(WithdrawalAddressError, match="deposit address"):
        request_withdrawal(to=payment.deposit_address.address.lower())
    assert balance_of(funded) == Decimal("100.00")


def test_the_whole_balance_can_be_withdrawn(funded, request_withdrawal):
    request_withdrawal("100.00")
    assert balance_of(funded) == Decimal("0.00")
    with pytest.raises(WithdrawalAmountError, match="0.00 USD"):
        request_withdrawal("10.00")


def test_the_minimum_is_a_setting(funded, request_withdrawal, settings):
    settings.WITHDRAWAL_MIN_USD = "50.00"
    with pytest.raises(WithdrawalAmountError, match="50.00"):
        request_withdrawal("49.99")
    assert request_withdrawal("50.00").amount_usd == Decimal("50.00")


def test_a_rejection_returns_the_amount(funded, request_withdrawal, finance_user):
    withdrawal = request_withdrawal("40.00")

    withdrawal_reject(withdrawal_id=withdrawal.pk, actor=finance_user, reason="Address on a list")

    withdrawal.refresh_from_db()
    assert withdrawal.status == WithdrawalStatus.REJECTED
    assert withdrawal.reject_reason == "Address on a list"
    assert withdrawal.decided_by == finance_user
    assert balance_of(funded) == Decimal("100.00")
    assert pending_total() == Decimal("0.00")
    returned = LedgerTransaction.objects.get(
        withdrawal=withdrawal, kind=TransactionKind.WITHDRAWAL_RETURN
    )
    assert returned.actor == finance_user
    last = WithdrawalEvent.objects.filter(withdrawal=withdrawal).last()
    assert (last.from_status, last.to_status, last.actor) == ("requested", "rejected", finance_user)
    assert last.reason == "Address on a list"
    # Rejected is final: neither a second rejection nor an approval moves money again.
    with pytest.raises(InvalidWithdrawalTransition):
        withdrawal_reject(withdrawal_id=withdrawal.pk, actor=finance_user, reason="again")
    with pytest.raises(InvalidWithdrawalTransition):
        withdrawal_approve(withdrawal_id=withdrawal.pk, actor=finance_user)
    assert balance_of(funded) == Decimal("100.00")


def test_an_approved_withdrawal_can_still_be_rejected(funded, approved, finance_user):
    withdrawal = approved("30.00")
    assert withdrawal.status == WithdrawalStatus.APPROVED
    assert balance_of(funded) == Decimal("70.00")

    withdrawal_reject(withdrawal_id=withdrawal.pk, actor=finance_user, reason="Customer asked")

    assert balance_of(funded) == Decimal("100.00")
    assert pending_total() == Decimal("0.00")


def test_a_rejection_needs_a_reason(funded, request_withdrawal, finance_user):
    withdrawal = request_withdrawal()
    with pytest.raises(WithdrawalError, match="reason"):
        withdrawal_reject(withdrawal_id=withdrawal.pk, actor=finance_user, reason="  ")
    withdrawal.refresh_from_db()
    assert withdrawal.status == WithdrawalStatus.REQUESTED


def test_nobody_decides_on_their_own_withdrawal(finance_user, credit, make_customer):
    credit(finance_user, "50.00")
    withdrawal = withdrawal_request(
        customer=finance_user,
        amount_usd=Decimal("20.00"),
        network="local",
        asset="tUSDC",
        to_address=CUSTOMER_WALLET,
        request_key=str(uuid4()),
    )
    with pytest.raises(OwnWithdrawal):
        withdrawal_approve(withdrawal_id=withdrawal.pk, actor=finance_user)
    withdrawal.refresh_from_db()
    assert withdrawal.status == WithdrawalStatus.REQUESTED
