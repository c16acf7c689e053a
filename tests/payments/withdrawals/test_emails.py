"""The customer is told by email, once, when their withdrawal is paid (with the transaction)
or rejected (with the reason, the amount back on the balance), in their language."""

from decimal import Decimal

from django.core import mail
from django.urls import reverse

from payments.chain import local
from payments.chain.local import PAYER_KEY
from payments.chain.selectors import network_name
from payments.models import WithdrawalEvent, WithdrawalStatus
from payments.withdrawals.services import withdrawal_check, withdrawal_enter_hash, withdrawal_reject
from payments.withdrawals.services.emails import withdrawal_event_email_send

from .conftest import CUSTOMER_WALLET, balance_of


def test_a_rejection_is_emailed_once_with_the_reason_and_the_amount_back(
    local_network, approved, funded, finance_user, django_capture_on_commit_callbacks
):
    withdrawal = approved("30.00")
    assert balance_of(funded) == Decimal("70.00")
    with django_capture_on_commit_callbacks(execute=True):
        withdrawal_reject(
            withdrawal_id=withdrawal.pk, actor=finance_user, reason="Address flagged by the bank"
        )

    assert balance_of(funded) == Decimal("100.00")
    (email,) = mail.outbox
    assert email.to == [funded.email]
    assert withdrawal.reference in email.subject and "rejected" in email.subject
    assert "30.00 USD" in email.body
    assert "Reason: Address flagged by the bank" in email.body
    assert reverse("payments:statement") in email.body
    event = WithdrawalEvent.objects.get(withdrawal=withdrawal, to_status=WithdrawalStatus.REJECTED)
    assert event.emailed_at is not None
    # A task delivered twice finds the mark and sends nothing more.
    assert withdrawal_event_email_send(event_id=event.pk) is False
    assert len(mail.outbox) == 1


def test_the_email_is_in_the_customers_language(
    local_network, approved, funded, finance_user, django_capture_on_commit_callbacks
):
    funded.language = "it"
    funded.save(update_fields=["language"])
    withdrawal = approved("20.00")
    with django_capture_on_commit_callbacks(execute=True):
        withdrawal_reject(
            withdrawal_id=withdrawal.pk, actor=finance_user, reason="Indirizzo errato"
        )

    (email,) = mail.outbox
    assert "rifiutato" in email.subject
    assert "Motivo: Indirizzo errato" in email.body


def test_a_paid_withdrawal_is_emailed_with_its_transaction(
    chain, approved, funded, finance_user, django_capture_on_commit_callbacks
):
    withdrawal = approved("15.00")
    tx_hash = local.transfer(chain.w3, chain.token_address, PAYER_KEY, CUSTOMER_WALLET, 15_000_000)
    withdrawal_enter_hash(withdrawal_id=withdrawal.pk, actor=finance_user, tx_hash=tx_hash)
    withdrawal.refresh_from_db()
    chain.mine(withdrawal.confirmations_required)
    assert not mail.outbox  # entering a hash and waiting tell the customer nothing yet

    with django_capture_on_commit_callbacks(execute=True):
        assert withdrawal_check(withdrawal_id=withdrawal.pk) == "paid"

    (email,) = mail.outbox
    assert email.to == [funded.email]
    assert "paid" in email.subject and "15.00 USD" in email.subject
    assert tx_hash in email.body
    assert CUSTOMER_WALLET in email.body
    assert f"in tUSDC on {network_name('local')} to" in email.body  # the network's name
    assert (
        reverse("payments:withdrawal_detail", kwargs={"withdrawal_id": withdrawal.pk}) in email.body
    )
