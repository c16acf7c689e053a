"""Reorganisations shallower than N, made with anvil_reorg on the local chain."""

from decimal import Decimal

from payments.ledger.services.posting import system_account
from payments.models import (
    ChainTransfer,
    CryptoPayment,
    LedgerAccountKind,
    LedgerTransaction,
    PaymentStatus,
    TransactionKind,
    TransferStatus,
)
from rental.models import Order, OrderStatus


def signed_transfer(chain, to: str, units: int) -> str:
    """A signed token transfer from the payer, as raw hex (so it can be re-included as is)."""
    from payments.chain.local import PAYER_KEY, token_contract

    w3 = chain.w3
    payer = w3.eth.account.from_key(PAYER_KEY)
    chain.mint(payer.address, units)
    tx = (
        token_contract(w3, chain.token_address)
        .functions.transfer(to, units)
        .build_transaction(
            {
                "from": payer.address,
                "nonce": w3.eth.get_transaction_count(payer.address),
                "chainId": w3.eth.chain_id,
                "gas": 100_000,
                "maxFeePerGas": 10**10,
                "maxPriorityFeePerGas": 10**9,
            }
        )
    )
    raw = payer.sign_transaction(tx).raw_transaction
    return "0x" + raw.hex().removeprefix("0x")


def send_raw(chain, raw: str) -> str:
    tx_hash = chain.w3.eth.send_raw_transaction(raw)
    chain.w3.eth.wait_for_transaction_receipt(tx_hash)
    return "0x" + tx_hash.hex().removeprefix("0x")


def test_a_reorg_that_drops_the_payment_before_n_confirmations_never_credits_it(
    chain, order_payment, scan
):
    payment = order_payment()
    raw = signed_transfer(chain, payment.deposit_address.address, int(payment.amount_due_units))
    send_raw(chain, raw)
    chain.mine(1)
    scan()
    assert CryptoPayment.objects.get(pk=payment.pk).status == PaymentStatus.DETECTED

    chain.reorg(2)  # replaces the transfer's block and the next one; the transfer is gone
    chain.mine(10)
    scan()
    scan()

    transfer = ChainTransfer.objects.get()
    assert transfer.status == TransferStatus.REORGED
    stepped_back = CryptoPayment.objects.get(pk=payment.pk)
    assert stepped_back.status == PaymentStatus.AWAITING
    assert stepped_back.received_units == 0 and stepped_back.seen_units == 0
    assert (
        not LedgerTransaction.objects.exists()
        or not LedgerTransaction.objects.filter(
            kind__in=[TransactionKind.CRYPTO_RECEIPT, TransactionKind.ORDER_PAYMENT]
        ).exists()
    )
    assert Order.objects.get(pk=payment.order_id).status == OrderStatus.AWAITING_PAYMENT


def test_a_reorg_that_re_includes_the_payment_credits_it_once(chain, order_payment, scan):
    payment = order_payment()
    raw = signed_transfer(chain, payment.deposit_address.address, int(payment.amount_due_units))
    tx_hash = send_raw(chain, raw)
    first_block = chain.head()
    chain.mine(1)
    scan()
    first_hash = ChainTransfer.objects.get().block_hash

    chain.reorg(2, [[raw, 1]])  # the same transaction, one block later, in a new branch
    chain.mine(5)
    scan()
    scan()

    transfer = ChainTransfer.objects.get()  # still one row: unique on chain, tx hash, log index
    assert transfer.tx_hash == tx_hash.lower()
    assert transfer.block_hash != first_hash
    assert transfer.block_number == first_block + 1
    assert transfer.status == TransferStatus.CONFIRMED
    assert CryptoPayment.objects.get(pk=payment.pk).status == PaymentStatus.CONFIRMED
    assert LedgerTransaction.objects.filter(kind=TransactionKind.CRYPTO_RECEIPT).count() == 1
    assert LedgerTransaction.objects.filter(kind=TransactionKind.ORDER_PAYMENT).count() == 1
    assert system_account(LedgerAccountKind.REVENUE).balance == Decimal("201.60")
