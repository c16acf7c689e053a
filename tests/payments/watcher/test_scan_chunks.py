"""A scan filters the node's answer chunk by chunk (only our logs outlive their chunk), with the
cycle collector paused while it runs and restored after, also when the node fails."""

import gc

import pytest

from payments.chain import scanning
from payments.chain.rpc import ChainClient, RangeTooLarge, RpcError
from payments.models import ChainTransfer, CryptoPayment, PaymentStatus

from .test_scan_reads import _scan_counting

STRANGER = "0x00000000000000000000000000000000000b0b01"


def test_our_transfers_in_several_chunks_among_others_are_all_stored(
    chain, top_up_payment, scan, pay, monkeypatch, settings
):
    settings.PAYMENT_CONFIRMATIONS = {**settings.PAYMENT_CONFIRMATIONS, "local": 50}
    first, second = top_up_payment("20.00"), top_up_payment("30.00")
    half = int(first.amount_due_units) // 2
    pay(first, half)
    chain.transfer(STRANGER, 7_000_000)  # someone else's transfer of the token
    chain.mine(3)
    pay(second)
    pay(first, int(first.amount_due_units) - half)  # the same address, paid in a later chunk
    chain.transfer(STRANGER, 9_000_000)
    chain.mine(1)
    monkeypatch.setattr(scanning, "MAX_CHUNK", 2)

    report, requests, _ = _scan_counting(scan, monkeypatch)

    assert [method for method, _ in requests].count("eth_getLogs") >= 4  # several chunks
    assert report.stored == 3
    stored = ChainTransfer.objects.order_by("block_number")
    assert [t.payment_id for t in stored] == [first.pk, second.pk, first.pk]
    assert not ChainTransfer.objects.filter(to_address__iexact=STRANGER).exists()
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.status, first.seen_units) == (PaymentStatus.DETECTED, first.amount_due_units)
    assert (second.status, second.seen_units) == (PaymentStatus.DETECTED, second.amount_due_units)


def test_the_collector_is_paused_during_a_scan_and_restored_after(
    chain, top_up_payment, scan, pay, monkeypatch
):
    payment = top_up_payment("12.00")
    pay(payment)
    chain.mine(1)
    read = ChainClient.transfer_logs
    during = []

    def reading(client, **kwargs):
        during.append(gc.isenabled())
        return read(client, **kwargs)

    monkeypatch.setattr(ChainClient, "transfer_logs", reading)
    assert gc.isenabled()
    assert scan().stored == 1
    assert during == [False]
    assert gc.isenabled()

    gc.disable()  # a caller that had it off keeps it off
    try:
        scan()
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert CryptoPayment.objects.get(pk=payment.pk).status != PaymentStatus.AWAITING


def test_the_collector_is_back_when_the_node_cannot_be_read(db, settings):
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": "http://127.0.0.1:9/"}
    with pytest.raises(RpcError):
        scanning.scan_network(network_key="local")
    assert gc.isenabled()


def test_recipients_are_matched_whatever_the_case_of_the_topics_hex(chain, top_up_payment):
    from payments.chain.networks import TRANSFER_TOPIC
    from payments.chain.rpc import transfer_recipients
    from payments.chain.storing import recipients

    payment = top_up_payment("10.00")
    address = payment.deposit_address.address  # checksummed, as stored
    upper = "0x" + "0" * 24 + address.removeprefix("0x").upper()
    other = "0x" + "0" * 24 + STRANGER.removeprefix("0x")
    logs = [
        {"topics": [TRANSFER_TOPIC, other, upper]},
        {"topics": [TRANSFER_TOPIC.upper().replace("0X", "0x"), other, upper.lower()]},
        {"topics": [TRANSFER_TOPIC, other, other]},
        {"topics": [TRANSFER_TOPIC, other, upper], "removed": True},  # reorganised away
        {"topics": [TRANSFER_TOPIC, other, upper, "0x01"]},  # an ERC-721 Transfer
    ]
    paid = transfer_recipients(logs)
    assert paid == [address.lower(), address.lower(), STRANGER, None, None]

    found = recipients(set(paid) - {None})
    assert {lower: (r.address, r.payment_id) for lower, r in found.items()} == {
        address.lower(): (address, payment.pk)
    }


def test_the_next_chunk_is_asked_of_the_node_while_the_scan_sorts_this_one(
    chain, top_up_payment, scan, pay, monkeypatch
):
    import threading

    from payments.chain import storing

    payment = top_up_payment("11.00")
    chain.mine(4)
    pay(payment)
    chain.mine(1)
    monkeypatch.setattr(scanning, "MAX_CHUNK", 2)
    read, lookup = ChainClient.transfer_logs, storing.recipients
    asked, second_asked, overlapped = [], threading.Event(), []

    def reading(client, **kwargs):
        asked.append((kwargs["from_block"], threading.current_thread().name))
        if len(asked) == 2:
            second_asked.set()
        return read(client, **kwargs)

    def looking_up(candidates):
        if not overlapped:  # the first chunk's recipients: is the second chunk under way?
            overlapped.append(second_asked.wait(timeout=10))
        return lookup(candidates)

    monkeypatch.setattr(ChainClient, "transfer_logs", reading)
    monkeypatch.setattr(scanning, "recipients", looking_up)
    assert scan().stored == 1
    assert overlapped == [True]  # asked before the first chunk's lookup went on
    assert asked[1][1].startswith("chain-reader")
    blocks = [block for block, _ in asked]
    assert blocks == sorted(blocks) and len(set(blocks)) == len(blocks)  # each chunk once


class Provider:
    """A stand-in at the boundary (anvil has no range limit): refuses a range wider than 300
    blocks, or 100 from block 3000 on, as providers do on busier stretches."""

    def __init__(self):
        self.answered: list[tuple[int, int]] = []

    def transfer_logs(self, *, from_block: int, to_block: int, to_address=None):
        if to_block - from_block + 1 > (100 if to_block >= 3000 else 300):
            raise RangeTooLarge("query returned more than 10000 results")
        self.answered.append((from_block, to_block))
        return list(range(from_block, to_block + 1))


def test_a_chunk_read_ahead_and_refused_is_halved_and_no_block_is_skipped():
    provider = Provider()
    blocks = [b for found in scanning._chunks(provider, 0, 4999, ahead=True) for b in found]
    assert blocks == list(range(5000))  # every block once, in order
    assert max(b - a + 1 for a, b in provider.answered if b >= 3000) <= 100
