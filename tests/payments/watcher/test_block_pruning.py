"""The block hashes the scan keeps for walking back to a fork point are pruned: per network,
the last N + BLOCKS_KEPT_BEYOND_CONFIRMATIONS blocks. A reorganisation deeper than that still
finds the money of every watched payment (the scan reads again from the oldest one's start)."""

import pytest

from payments.chain import storing
from payments.chain.networks import get_network
from payments.models import ChainBlock, ChainTransfer, CryptoPayment, PaymentStatus


@pytest.fixture
def chain(private_chain):
    """Reorganisations this deep outlive anvil's snapshots: each test has a chain of its own."""
    return private_chain


@pytest.fixture
def keep_five(monkeypatch):
    monkeypatch.setattr(storing, "BLOCKS_KEPT_BEYOND_CONFIRMATIONS", 5)
    return 5


def test_old_block_hashes_are_pruned_and_the_recent_ones_kept(
    chain, top_up_payment, pay, scan, keep_five
):
    payment = top_up_payment("20.00")
    pay(payment)
    chain.mine(1)
    scan()
    transfer_block = ChainTransfer.objects.get().block_number
    assert ChainBlock.objects.filter(number=transfer_block).exists()
    for _ in range(6):
        chain.mine(3)
        scan()

    end = chain.head() - 1
    confirmations = get_network("local").confirmations
    numbers = sorted(ChainBlock.objects.filter(network="local").values_list("number", flat=True))
    assert numbers[-1] == end  # the last block read, whose hash the next scan compares
    assert numbers[0] >= end - confirmations - keep_five  # nothing older is kept
    assert len(numbers) <= confirmations + keep_five + 1
    assert transfer_block < end - confirmations - keep_five  # ... so it was pruned
    # Every kept hash is the chain's.
    assert all(
        block_hash == chain.block_hash(number).lower()
        for number, block_hash in ChainBlock.objects.values_list("number", "hash")
    )


def test_a_reorganisation_deeper_than_the_kept_hashes_still_finds_a_watched_payment(
    chain, top_up_payment, scan, keep_five
):
    payment = top_up_payment("30.00")
    for _ in range(10):
        chain.mine(3)
        scan()
    oldest_kept = ChainBlock.objects.order_by("number").values_list("number", flat=True).first()
    depth = chain.head() - oldest_kept + 5  # below every stored hash
    assert chain.head() - depth + 1 > CryptoPayment.objects.get(pk=payment.pk).created_block

    transfer = chain.transfer_request(
        payment.deposit_address.address, int(payment.amount_due_units)
    )
    chain.reorg(depth, [[transfer, 0]])  # the payment's transfer, in the first new block
    chain.mine(1)
    report = scan()

    assert report.fork_point is None  # no stored hash left below the fork
    stored = ChainTransfer.objects.get()
    assert stored.block_number == chain.head() - depth
    # Deep in the new branch, it has its confirmations already.
    assert CryptoPayment.objects.get(pk=payment.pk).status == PaymentStatus.CONFIRMED
