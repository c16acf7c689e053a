"""`make send-withdrawal WITHDRAWAL=<id>`: finance's wallet on the local chain (make run) sends
an approved withdrawal, prints the hash, and that hash pays the withdrawal once confirmed."""

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from payments.chain import local
from payments.models import Withdrawal, WithdrawalStatus
from payments.withdrawals.services import withdrawal_check, withdrawal_enter_hash

from .conftest import CUSTOMER_WALLET


def send(withdrawal_id, *args) -> str:
    out = StringIO()
    call_command("send_withdrawal_local", withdrawal_id, *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_the_printed_hash_pays_the_withdrawal(chain, approved, finance_user):
    withdrawal = approved("12.50")
    before = local.balance_of(chain.w3, chain.token_address, CUSTOMER_WALLET)

    output = send(withdrawal.pk)

    tx_hash = re.search(r"Transaction: (0x[0-9a-f]{64})", output).group(1)
    assert local.balance_of(chain.w3, chain.token_address, CUSTOMER_WALLET) == before + 12_500_000
    withdrawal_enter_hash(withdrawal_id=withdrawal.pk, actor=finance_user, tx_hash=tx_hash)
    chain.mine(withdrawal.confirmations_required)
    assert withdrawal_check(withdrawal_id=withdrawal.pk) == "paid"
    withdrawal.refresh_from_db()
    assert withdrawal.status == WithdrawalStatus.PAID


def test_too_little_sent_on_purpose_keeps_it_pending_with_the_reason(
    chain, approved, finance_user
):
    withdrawal = approved("12.50")
    output = send(withdrawal.pk, "--units", "4000000")
    tx_hash = re.search(r"Transaction: (0x[0-9a-f]{64})", output).group(1)
    withdrawal_enter_hash(withdrawal_id=withdrawal.pk, actor=finance_user, tx_hash=tx_hash)
    chain.mine(withdrawal.confirmations_required)
    withdrawal_check(withdrawal_id=withdrawal.pk)
    withdrawal.refresh_from_db()
    assert withdrawal.status == WithdrawalStatus.SENT
    assert withdrawal.check_detail == "amount 4.00 is less than 12.50"


def test_it_refuses_other_networks_and_unknown_withdrawals(approved, chain):
    withdrawal = approved("12.50")
    Withdrawal.objects.filter(pk=withdrawal.pk).update(network="base")
    with pytest.raises(CommandError, match="only sends on the local chain"):
        send(withdrawal.pk)
    with pytest.raises(CommandError, match="There is no withdrawal #999999"):
        send(999999)
