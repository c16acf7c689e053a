"""Reorganisations deeper than the confirmations, made with anvil_reorg on the local chain:
the scan walks back through stored block hashes to the fork point, however deep."""

from decimal import Decimal

import pytest
from django.urls import reverse

from payments.chain.local import PAYER_KEY, token_contract
from payments.ledger.services.posting import system_account
from payments.models import (
    ChainTransfer,
    CryptoPayment,
    LedgerAccountKind,
    LedgerTransaction,
    PaymentStatus,
    ReviewReason,
    TransactionKind,
    TransferStatus,
)
from rental.models import Order, OrderStatus


def signed_transfer(chain, to: str, units: int, nonce: int | None = None) -> str:
    """A signed token transfer from the payer (funded beforehand), as raw hex, so that the
    same transaction can be included again in another branch."""
    w3 = chain.w3
    payer = w3.eth.account.from_key(PAYER_KEY)
    if nonce is None:
        nonce = w3.eth.get_transaction_count(payer.address)
    tx = (
        token_contract(w3, chain.token_address)
        .functions.transfer(to, units)
        .build_transaction(
            {
                "from": payer.address,
                "nonce": nonce,
                "chainId": w3.eth.chain_id,
                "gas": 100_000,
                "maxFeePerGas": 10**10,
                "maxPriorityFeePerGas": 10**9,
            }
        )
    )
    return "0x" + payer.sign_transaction(tx).raw_transaction.hex().removeprefix("0x")


def send_raw(chain, raw: str) -> str:
    tx_hash = chain.w3.eth.send_raw_transaction(raw)
    chain.w3.eth.wait_for_transaction_receipt(tx_hash)
    return "0x" + tx_hash.hex().removeprefix("0x")


@pytest.fixture
def chain(private_chain):
    """Reorganisations this deep outlive anvil's snapshots: each test has a chain of its own."""
    return private_chain


def test_a_transfer_included_again_far_before_the_old_rescan_window_is_found(
    chain, order_payment, scan
):
    payment = order_payment()
    chain.mine(6)
    scan()  # the watcher has read up to here: its block hashes are stored
    raw = signed_transfer(chain, payment.deposit_address.address, int(payment.amount_due_units))
    tx_hash = send_raw(chain, raw)
    block = chain.head()
    chain.mine(1)
    scan()
    assert ChainTransfer.objects.get().block_number == block  # seen, not yet confirmed

    # A reorganisation 7 blocks deep puts the same transaction 5 blocks earlier; the old
    # scan re-read only N + 1 = 4 blocks behind its cursor and never saw it again.
    depth = chain.head() - (block - 5) + 1
    chain.reorg(depth, [[raw, 0]])
    chain.mine(5)
    scan()
    scan()

    transfer = ChainTransfer.objects.get()
    assert (transfer.tx_hash, transfer.block_number) == (tx_hash.lower(), block - 5)
    assert transfer.status == TransferStatus.CONFIRMED
    assert CryptoPayment.objects.get(pk=payment.pk).status == PaymentStatus.CONFIRMED
    assert Order.objects.get(pk=payment.order_id).status == OrderStatus.PROVISIONING
    assert LedgerTransaction.objects.filter(kind=TransactionKind.CRYPTO_RECEIPT).count() == 1
    assert system_account(LedgerAccountKind.REVENUE).balance == Decimal("201.60")


def test_a_confirmed_transfer_whose_block_vanished_goes_to_the_operators(
    chain, order_payment, pay, scan, operator_client
):
    payment = order_payment()
    pay(payment)
    chain.mine(3)
    scan()
    assert CryptoPayment.objects.get(pk=payment.pk).status == PaymentStatus.CONFIRMED

    chain.reorg(6)  # deeper than the confirmations, and the transfer is not in the new branch
    chain.mine(2)
    scan()

    transfer = ChainTransfer.objects.get()
    assert transfer.status == TransferStatus.REVERSED  # before: still "confirmed", no alert
    reversed_payment = CryptoPayment.objects.get(pk=payment.pk)
    assert (reversed_payment.status, reversed_payment.review_reason) == (
        PaymentStatus.NEEDS_REVIEW,
        ReviewReason.REVERSED,
    )
    # The ledger waits for an operator: the receipt and the revenue stay as they were.
    receipts = system_account(LedgerAccountKind.CRYPTO_RECEIPTS, asset="tUSDC", network="local")
    assert receipts.balance == Decimal("-201.60")
    queue = operator_client.get(reverse("payments:ops_queue")).content.decode()
    assert transfer.tx_hash in queue and "Reversed after confirmation" in queue
    assert payment.reference in queue


def test_a_shallow_reorg_rescans_from_the_fork_point(chain, order_payment, pay, scan):
    payment = order_payment()
    chain.mine(3)
    scan()
    before = chain.head() - 1  # the last block the watcher read, its hash stored
    pay(payment)
    chain.mine(1)
    scan()
    # The payer's transaction in the new branch takes the dropped one's nonce.
    nonce = chain.w3.eth.get_transaction_count(chain.payer) - 1
    replacement = signed_transfer(chain, payment.deposit_address.address, 10**6, nonce)
    chain.reorg(2, [[replacement, 1]])
    chain.mine(5)

    report = scan()

    assert report.fork_point == before
    scan()
    # The original transfer is gone; the one in the new branch is found and counted.
    statuses = sorted(ChainTransfer.objects.values_list("status", flat=True))
    assert statuses == [TransferStatus.CONFIRMED, TransferStatus.REORGED]
    assert CryptoPayment.objects.get(pk=payment.pk).received_units == 10**6
