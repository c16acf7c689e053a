"""`withdrawal_set_status`, the one way a withdrawal changes status: every pair of statuses
is allowed exactly when WITHDRAWAL_TRANSITIONS says so, and each change writes its event."""

from decimal import Decimal
from itertools import product

import pytest
from django.db import transaction

from payments.locks import lock_withdrawal
from payments.models import (
    WITHDRAWAL_TRANSITIONS,
    Withdrawal,
    WithdrawalEvent,
    WithdrawalStatus,
)
from payments.withdrawals.services import InvalidWithdrawalTransition, withdrawal_set_status
from tests.states import withdrawal_walk

from .conftest import CUSTOMER_WALLET

PAIRS = list(product(WithdrawalStatus.values, repeat=2))


@pytest.fixture
def withdrawal_in(customer, finance_user):
    def make(status: str) -> Withdrawal:
        withdrawal = Withdrawal.objects.create(  # a new request
            customer=customer,
            amount_usd=Decimal("20.00"),
            network="local",
            chain_id=31337,
            asset="tUSDC",
            token_address="0x" + "11" * 20,
            decimals=6,
            amount_units=20_000_000,
            to_address=CUSTOMER_WALLET,
            confirmations_required=3,
        )
        # Sent on the way with another hash than the pair's own, to tell them apart.
        withdrawal_walk(
            withdrawal, status, actor=finance_user, tx_hash="0x" + "ef" * 32, reason="On the way"
        )
        assert withdrawal.status == status
        return withdrawal

    return make


def data_for(to_status: str) -> dict:
    if to_status == WithdrawalStatus.SENT:
        return {"tx_hash": "0x" + "ab" * 32}
    if to_status == WithdrawalStatus.PAID:
        return {"block": 7}
    return {}


@pytest.mark.parametrize(("from_status", "to_status"), PAIRS)
def test_each_pair_follows_the_map(withdrawal_in, finance_user, from_status, to_status):
    withdrawal = withdrawal_in(from_status)
    allowed = to_status in WITHDRAWAL_TRANSITIONS[from_status]

    with transaction.atomic():
        locked = lock_withdrawal(withdrawal_id=withdrawal.pk)
        if not allowed:
            with pytest.raises(InvalidWithdrawalTransition):
                withdrawal_set_status(
                    locked, to_status, actor=finance_user, reason="Why", **data_for(to_status)
                )
        else:
            withdrawal_set_status(
                locked, to_status, actor=finance_user, reason="Why", **data_for(to_status)
            )

    withdrawal.refresh_from_db()
    events = list(
        WithdrawalEvent.objects.filter(withdrawal=withdrawal).exclude(reason="On the way")
    )
    if not allowed:
        assert withdrawal.status == from_status
        assert events == []
        return
    assert withdrawal.status == to_status
    (event,) = events
    assert (event.from_status, event.to_status, event.actor, event.reason) == (
        from_status,
        to_status,
        finance_user,
        "Why",
    )
    if to_status == WithdrawalStatus.SENT:
        assert withdrawal.tx_hash == "0x" + "ab" * 32
    if to_status == WithdrawalStatus.PAID:
        assert (withdrawal.block_number, withdrawal.paid_at is not None) == (7, True)
    if to_status == WithdrawalStatus.REJECTED:
        assert withdrawal.reject_reason == "Why"
    if (from_status, to_status) == ("sent", "approved"):
        assert withdrawal.tx_hash == ""
        assert event.data == {"tx_hash": "0x" + "ef" * 32}  # the hash taken back, kept


def test_paid_and_rejected_are_final():
    assert WITHDRAWAL_TRANSITIONS[WithdrawalStatus.PAID] == frozenset()
    assert WITHDRAWAL_TRANSITIONS[WithdrawalStatus.REJECTED] == frozenset()
