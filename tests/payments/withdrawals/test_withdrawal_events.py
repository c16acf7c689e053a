"""Each state of a withdrawal its customer sees is one webhook event, written by the request
and the one setter in the transaction of the change: requested, approved, sent, rejected."""

import pytest

from outbox.models import OutboxEvent
from payments.withdrawals.services import (
    WithdrawalError,
    withdrawal_approve,
    withdrawal_reject,
)
from payments.withdrawals.services.decisions import withdrawal_enter_hash

from .conftest import CUSTOMER_WALLET

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("local_network")]


def events_of(customer) -> list[tuple[str, dict]]:
    return [
        (event.event_type, event.payload["withdrawal"])
        for event in OutboxEvent.objects.filter(
            account=customer, event_type__startswith="withdrawal."
        ).order_by("pk")
    ]


def test_requested_approved_sent_each_write_one_event_with_the_status(
    funded, request_withdrawal, finance_user
):
    withdrawal = request_withdrawal("25.00", key="same")
    request_withdrawal("25.00", key="same")  # the same request again: no second event
    withdrawal_approve(withdrawal_id=withdrawal.pk, actor=finance_user)
    withdrawal_enter_hash(withdrawal_id=withdrawal.pk, actor=finance_user, tx_hash="0x" + "ab" * 32)

    written = events_of(funded)
    assert [(kind, data["status"]) for kind, data in written] == [
        ("withdrawal.requested", "requested"),
        ("withdrawal.approved", "approved"),
        ("withdrawal.sent", "sent"),
    ]
    data = written[-1][1]
    assert (data["reference"], data["amount_usd"], data["to_address"], data["tx_hash"]) == (
        withdrawal.reference,
        "25.00",
        CUSTOMER_WALLET,
        "0x" + "ab" * 32,
    )


def test_a_rejection_is_withdrawal_rejected_with_its_reason_and_a_refused_change_writes_none(
    funded, request_withdrawal, finance_user
):
    withdrawal = request_withdrawal("10.00")
    withdrawal_reject(withdrawal_id=withdrawal.pk, actor=finance_user, reason="Wrong network")
    with pytest.raises(WithdrawalError):
        withdrawal_approve(withdrawal_id=withdrawal.pk, actor=finance_user)

    written = events_of(funded)
    assert [kind for kind, _ in written] == ["withdrawal.requested", "withdrawal.rejected"]
    assert written[-1][1]["reject_reason"] == "Wrong network"
    assert written[-1][1]["status"] == "rejected"
