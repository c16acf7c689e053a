"""The worker's check of finance's transfer on a real chain (anvil) with the test stablecoin:
only the right token, to the right address, for at least the amount, with N confirmations,
pays a withdrawal; anything else keeps it sent with the reason."""

from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse
from web3 import Web3

from payments.chain import local
from payments.chain.local import DEPLOYER_KEY, PAYER_KEY
from payments.models import LedgerTransaction, TransactionKind, WithdrawalEvent, WithdrawalStatus
from payments.withdrawals.services import (
    WithdrawalError,
    WithdrawalHashError,
    withdrawal_check,
    withdrawal_enter_hash,
    withdrawal_reject,
    withdrawal_take_hash_back,
)

from .conftest import CUSTOMER_WALLET, OTHER_WALLET, balance_of, paid_total, pending_total


@pytest.fixture
def sent(chain, approved, finance_user):
    """An approved withdrawal of 15.00 tUSDC (or `withdrawal`), the transfer finance makes
    (units, to, token), and its hash entered: the withdrawal as the worker finds it."""

    def send(*, units=15_000_000, to=CUSTOMER_WALLET, token=None, withdrawal=None):
        withdrawal = withdrawal or approved("15.00")
        tx_hash = local.transfer(chain.w3, token or chain.token_address, PAYER_KEY, to, units)
        withdrawal_enter_hash(withdrawal_id=withdrawal.pk, actor=finance_user, tx_hash=tx_hash)
        withdrawal.refresh_from_db()
        return withdrawal

    return send


def client_of(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def check(withdrawal) -> str:
    result = withdrawal_check(withdrawal_id=withdrawal.pk)
    withdrawal.refresh_from_db()
    return result


def check_events(withdrawal):
    return list(WithdrawalEvent.objects.filter(withdrawal=withdrawal, data__kind="check"))


def test_the_right_transfer_with_its_confirmations_pays_the_withdrawal(chain, sent, funded):
    withdrawal = sent()
    assert withdrawal.status == WithdrawalStatus.SENT
    assert withdrawal.confirmations_required == 3

    assert check(withdrawal) == "confirming"  # mined in the head block: 1 confirmation
    assert withdrawal.status == WithdrawalStatus.SENT
    assert withdrawal.check_detail == "1 of 3 confirmations"
    html = (
        client_of(funded)
        .get(reverse("payments:withdrawal_detail", kwargs={"withdrawal_id": withdrawal.pk}))
        .content.decode()
    )
    assert "1 of 3 confirmations" in html
    assert 'data-field="confirmations">1/3' in html
    assert "hx-get" in html
    chain.mine(1)
    assert check(withdrawal) == "confirming"
    assert withdrawal.check_detail == "2 of 3 confirmations"
    assert len(check_events(withdrawal)) == 1  # the same result again writes no new event
    chain.mine(1)

    assert check(withdrawal) == "paid"

    assert withdrawal.status == WithdrawalStatus.PAID
    assert withdrawal.paid_at is not None
    assert withdrawal.block_number == chain.receipt(withdrawal.tx_hash)["blockNumber"]
    assert withdrawal.check_detail == "paid with 3 confirmations (3 required)"
    assert balance_of(funded) == Decimal("85.00")
    assert pending_total() == Decimal("0.00")
    assert paid_total() == Decimal("15.00")
    (paid,) = LedgerTransaction.objects.filter(
        withdrawal=withdrawal, kind=TransactionKind.WITHDRAWAL_PAID
    )
    assert paid.actor is None
    last = WithdrawalEvent.objects.filter(withdrawal=withdrawal).last()
    assert (last.from_status, last.to_status, last.actor) == ("sent", "paid", None)
    page = client_of(funded).get(
        reverse("payments:withdrawal_detail", kwargs={"withdrawal_id": withdrawal.pk})
    )
    html = page.content.decode()
    assert "Paid: the transfer to your address is confirmed on chain." in html
    assert withdrawal.tx_hash in html
    assert 'data-field="receipt-link"' in html
    assert "hx-get" not in html
    # Paid is final: another look changes nothing and posts nothing.
    assert check(withdrawal) == ""
    assert paid_total() == Decimal("15.00")


def test_more_than_the_amount_pays_it_too(chain, sent):
    withdrawal = sent(units=15_000_001)
    chain.mine(2)
    assert check(withdrawal) == "paid"


def test_a_transfer_of_another_token_does_not_pay(chain, sent, funded):
    other_token = local.deploy_token(chain.w3, DEPLOYER_KEY)
    local.mint(chain.w3, other_token, chain.payer, 20_000_000)
    withdrawal = sent(token=other_token)
    chain.mine(5)

    assert check(withdrawal) == "other_token"

    assert withdrawal.status == WithdrawalStatus.SENT
    assert withdrawal.check_detail == "the transfer is of another token"
    assert pending_total() == Decimal("15.00")
    assert paid_total() == Decimal("0.00")
    (event,) = check_events(withdrawal)
    assert event.data["result"] == "other_token"
    assert event.from_status == event.to_status == ""  # no status change


def test_a_transfer_to_another_address_does_not_pay(chain, sent):
    withdrawal = sent(to=OTHER_WALLET)
    chain.mine(5)

    assert check(withdrawal) == "other_address"
    assert withdrawal.status == WithdrawalStatus.SENT
    assert withdrawal.check_detail == "sent to another address"


def test_a_short_amount_does_not_pay(chain, sent):
    withdrawal = sent(units=4_000_000)
    chain.mine(5)

    assert check(withdrawal) == "short_amount"
    assert withdrawal.status == WithdrawalStatus.SENT
    assert withdrawal.check_detail == "amount 4.00 is less than 15.00"
    assert pending_total() == Decimal("15.00")


def test_an_unknown_hash_is_no_transaction_yet(chain, approved, finance_user):
    withdrawal = approved("15.00")
    withdrawal_enter_hash(withdrawal_id=withdrawal.pk, actor=finance_user, tx_hash="0x" + "ab" * 32)

    assert check(withdrawal) == "not_found"
    assert withdrawal.status == WithdrawalStatus.SENT
    assert withdrawal.check_detail == "no such transaction yet"


def test_a_failed_transaction_does_not_pay(chain, approved, finance_user):
    withdrawal = approved("15.00")
    # A transfer of more than the sender holds, with gas given so that it is mined and reverts.
    poor = chain.w3.eth.account.create()
    chain.w3.eth.send_transaction(
        {"from": chain.deployer, "to": poor.address, "value": Web3.to_wei(1, "ether")}
    )
    call = chain.token.functions.transfer(CUSTOMER_WALLET, 15_000_000)
    tx = call.build_transaction(
        {
            "from": poor.address,
            "gas": 100_000,
            "nonce": 0,
            "chainId": chain.chain_id,
            "maxFeePerGas": 10**10,
            "maxPriorityFeePerGas": 10**9,
        }
    )
    tx_hash = chain.w3.eth.send_raw_transaction(poor.sign_transaction(tx).raw_transaction)
    assert chain.w3.eth.wait_for_transaction_receipt(tx_hash)["status"] == 0
    withdrawal_enter_hash(
        withdrawal_id=withdrawal.pk, actor=finance_user, tx_hash=tx_hash.to_0x_hex()
    )
    chain.mine(5)

    assert check(withdrawal) == "failed"
    assert withdrawal.check_detail == "transaction failed"
    assert withdrawal.status == WithdrawalStatus.SENT


def test_a_hash_already_used_for_another_withdrawal_is_refused(chain, sent, approved, funded):
    first = sent()
    second = approved("16.00")

    with pytest.raises(WithdrawalHashError) as refused:
        withdrawal_enter_hash(
            withdrawal_id=second.pk,
            actor=first.decided_by,
            tx_hash="0x" + first.tx_hash[2:].upper(),
        )

    assert first.reference in str(refused.value.message)
    second.refresh_from_db()
    assert second.status == WithdrawalStatus.APPROVED
    assert second.tx_hash == ""


def test_a_wrong_hash_taken_back_lets_finance_enter_the_right_one(chain, sent, finance_user):
    withdrawal = sent(to=OTHER_WALLET)
    assert check(withdrawal) == "other_address"

    withdrawal_take_hash_back(
        withdrawal_id=withdrawal.pk, actor=finance_user, reason="Pasted the wrong transaction"
    )
    withdrawal.refresh_from_db()
    assert (withdrawal.status, withdrawal.tx_hash, withdrawal.check_detail) == ("approved", "", "")
    right = sent(withdrawal=withdrawal)
    chain.mine(2)

    assert check(right) == "paid"
    assert paid_total() == Decimal("15.00")


def test_a_sent_withdrawal_whose_transfer_is_on_chain_cannot_be_rejected_or_taken_back(
    chain, sent, funded, finance_user
):
    """Money has left (even at 1 of 3 confirmations): rejecting would give the amount back to
    the balance as well, and taking the hash back would free it for a second transfer."""
    withdrawal = sent()
    for refuse in (
        lambda: withdrawal_reject(withdrawal_id=withdrawal.pk, actor=finance_user, reason="x"),
        lambda: withdrawal_take_hash_back(
            withdrawal_id=withdrawal.pk, actor=finance_user, reason="x"
        ),
    ):
        with pytest.raises(WithdrawalError, match="money has left"):
            refuse()
    withdrawal.refresh_from_db()
    assert withdrawal.status == WithdrawalStatus.SENT
    assert balance_of(funded) == Decimal("85.00") and pending_total() == Decimal("15.00")
    chain.mine(2)
    assert check(withdrawal) == "paid"


def test_a_short_transfer_blocks_the_rejection_but_its_hash_may_be_taken_back(
    chain, sent, funded, finance_user
):
    withdrawal = sent(units=4_000_000)
    with pytest.raises(WithdrawalError, match="money has left"):
        withdrawal_reject(withdrawal_id=withdrawal.pk, actor=finance_user, reason="too little")
    withdrawal_take_hash_back(withdrawal_id=withdrawal.pk, actor=finance_user, reason="resend")
    withdrawal.refresh_from_db()
    assert withdrawal.status == WithdrawalStatus.APPROVED and withdrawal.tx_hash == ""
    assert balance_of(funded) == Decimal("85.00")


def test_a_sent_withdrawal_whose_transaction_paid_someone_else_can_be_rejected(
    chain, sent, funded, finance_user
):
    withdrawal = sent(to=OTHER_WALLET)
    withdrawal_reject(withdrawal_id=withdrawal.pk, actor=finance_user, reason="wrong address")
    withdrawal.refresh_from_db()
    assert withdrawal.status == WithdrawalStatus.REJECTED
    assert balance_of(funded) == Decimal("100.00") and pending_total() == Decimal("0.00")
