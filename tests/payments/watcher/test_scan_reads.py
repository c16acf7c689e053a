"""What one scan asks the node and the database: a fixed number of requests whatever the number
of transfers, and nothing stored from a read that a reorganisation overtook."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from payments.chain.rpc import ChainClient
from payments.models import ChainCursor, ChainTransfer, CryptoPayment, PaymentStatus, TransferStatus
from rental.models import Order, OrderStatus

from .test_reorgs import send_raw, signed_transfer


def test_a_reorganisation_during_the_read_is_read_again_and_the_payment_is_paid(
    chain, order_payment, scan, monkeypatch
):
    payment = order_payment()
    raw = signed_transfer(chain, payment.deposit_address.address, int(payment.amount_due_units))
    tx_hash = send_raw(chain, raw)
    block = chain.head()
    chain.mine(2)  # the scan reads up to block + 1 (one behind the head)

    # While the scan reads the logs, the last three blocks are replaced: the same transaction
    # lands one block later. The scan has read the old branch.
    read = ChainClient.transfer_logs
    race = []

    def read_then_reorganise(client, **kwargs):
        logs = read(client, **kwargs)
        if not race:
            old_hash = chain.block_hash(block)
            chain.reorg(3, [[raw, 1]])
            race.append(chain.block_hash(block) != old_hash)
        return logs

    monkeypatch.setattr(ChainClient, "transfer_logs", read_then_reorganise)
    racing = scan()
    monkeypatch.undo()
    assert race == [True]  # the reorganisation happened during that scan's read
    # Before: the transfer was stored in its old block, with the new branch's hash as the
    # cursor's, and dropped as reorganised; the new block was never read and the order stayed
    # unpaid.
    assert not ChainTransfer.objects.exists()
    cursor = ChainCursor.objects.get(network="local")
    assert cursor.lease_token == ""
    assert f"block {block + 1} changed during the read" in cursor.last_error  # for /ops/
    assert racing.chain_moved

    chain.mine(3)
    scan()
    assert ChainCursor.objects.get(network="local").last_error == ""

    transfer = ChainTransfer.objects.get()
    assert (transfer.tx_hash, transfer.block_number) == (tx_hash.lower(), block + 1)
    assert transfer.block_hash == chain.block_hash(block + 1).lower()
    assert transfer.status == TransferStatus.CONFIRMED
    assert CryptoPayment.objects.get(pk=payment.pk).status == PaymentStatus.CONFIRMED
    assert Order.objects.get(pk=payment.order_id).status == OrderStatus.PROVISIONING  # paid


def _scan_counting(scan, monkeypatch):
    """Run a scan; (its JSON-RPC requests, as (method, calls in it), its database queries)."""
    post = ChainClient._post
    requests = []

    def counting(client, payload):
        calls = payload if isinstance(payload, list) else [payload]
        requests.append((calls[0]["method"], len(calls)))
        return post(client, payload)

    monkeypatch.setattr(ChainClient, "_post", counting)
    with CaptureQueriesContext(connection) as queries:
        report = scan()
    monkeypatch.undo()
    return report, requests, len(queries)


def test_a_scan_asks_the_same_few_requests_for_one_transfer_and_for_twenty(
    chain, top_up_payment, scan, pay, monkeypatch, settings
):
    # One confirmation: each scan stores and confirms its transfers (nothing left pending).
    settings.PAYMENT_CONFIRMATIONS = {**settings.PAYMENT_CONFIRMATIONS, "local": 1}
    chain.mine(2)
    scan()  # the cursor has read a block: later scans check the one before them
    counted = []
    for transfers in (1, 1, 20):  # the first creates the ledger accounts once
        payments = [top_up_payment("15.00") for _ in range(transfers)]
        for payment in payments:
            pay(payment)  # one block each
        chain.mine(1)
        report, requests, queries = _scan_counting(scan, monkeypatch)
        assert (report.stored, report.confirmed) == (transfers, transfers)
        assert (
            CryptoPayment.objects.filter(
                pk__in=[p.pk for p in payments], status=PaymentStatus.CONFIRMED
            ).count()
            == transfers
        )
        counted.append((requests, queries))

    _first, (one_requests, one_queries), (twenty_requests, twenty_queries) = counted
    # One batch for the head and the block before the cursor, the logs, one batch for the last
    # block again. The blocks of the transfers are not fetched, not even to confirm them (the
    # scan has just read their hashes): before, a scan asked for the head, the block before the
    # cursor, the logs, the last block, and then the seen transfers' blocks.
    assert one_requests == [
        ("eth_getBlockByNumber", 2),
        ("eth_getLogs", 1),
        ("eth_getBlockByNumber", 1),
    ]
    assert twenty_requests == one_requests
    assert twenty_queries == one_queries


def test_a_seen_transfer_from_an_earlier_scan_is_checked_against_the_chain_when_it_confirms(
    chain, top_up_payment, scan, pay, monkeypatch
):
    payment = top_up_payment("17.00")
    pay(payment)
    chain.mine(1)
    scan()  # seen, one confirmation short of three
    chain.mine(2)
    _report, requests, _ = _scan_counting(scan, monkeypatch)

    # Its block was read by an earlier scan: it is fetched again before it counts.
    assert ("eth_getBlockByNumber", 1) in requests[3:]
    assert CryptoPayment.objects.get(pk=payment.pk).status == PaymentStatus.CONFIRMED
