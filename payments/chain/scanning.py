"""Scanning: read the token contracts' Transfer logs and store those to our deposit addresses.

A scan never holds a row lock during an RPC call. It claims the network's cursor with a short
lease (payments.chain.lease), reads, and writes what it read in one short transaction.

RPC calls of one scan: one batch for the head block and the block before the cursor, the
eth_getLogs chunks, and one batch after them for the last block again (with the blocks of logs
that carry no timestamp, and after a fork the blocks of confirmed transfers). The last block's
hash is taken from the head's parent before the logs are read and compared after: when it
changed, a reorganisation happened during the read, and the scan writes nothing (the next one
reads again). So every log a scan stores, and its block hash, is on the chain whose last block
the cursor keeps.

Reading: every Transfer log of the tokens in the range, each one's recipient taken from its
third topic in one pass over the node's raw answer (rpc.transfer_recipients), the recipients
looked up at once, and only the logs to our deposit addresses parsed. Asking the node for the
logs to our addresses alone (Transfer's third topic as a list, in batches) was measured too
(bench/watcher.py): 0.34x the bare read among 20,800 transfers, but 1.44x among 2,000 (more
requests than logs saved), and the addresses would have to be every deposit address ever made,
not only the watched ones (a late payment to an expired payment's address is still recorded):
their number only grows, and providers cap such lists. So the scan reads all and filters here.

Reorganisations: the scan keeps the hash of its last block and of every block holding one of
our transfers (ChainBlock). When the block before the cursor has another hash, it walks back
through those to the newest block the chain still has — the fork point — and reads again from
there, however deep (up to storing.BLOCKS_KEPT_BEYOND_CONFIRMATIONS). A transfer found again in
another block moves there; a confirmed transfer whose block is gone is reversed
(payments.chain.confirming.transfers_reversed).
"""

import os
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Min
from django.utils import timezone

from ..locks import lock_cursor
from ..models import (
    WATCHED_STATUSES,
    ChainBlock,
    ChainCursor,
    ChainTransfer,
    CryptoPayment,
    TransferStatus,
)
from .confirming import confirm_transfers, transfers_reversed
from .lease import Lease, LeaseLost, claim, lease_duration
from .networks import HEAD_LAG, Network, get_network
from .rpc import (
    Block,
    ChainClient,
    RangeTooLarge,
    RpcError,
    TransferLog,
    collector_paused,
    parse_transfer,
    transfer_recipients,
)
from .storing import Recipient, checkpoint, prune_blocks, recipients, store_transfers

__all__ = ["Lease", "LeaseLost", "claim", "lease_duration", "scan_network", "payment_check"]

MAX_CHUNK = 2000  # blocks per eth_getLogs; halved on a provider range error
DECLARATION_LOOKBACK_BLOCKS = 5000  # "I have paid" without a hash: read this far back
FORK_WALK_BATCH = 32  # stored block hashes compared per RPC batch when walking back


@dataclass
class ScanReport:
    network: str
    from_block: int | None = None
    to_block: int | None = None
    stored: int = 0
    confirmed: int = 0
    reorged: int = 0
    reversed: int = 0
    fork_point: int | None = None
    skipped: bool = False
    chain_moved: bool = False  # reorganised during the read: nothing written, read again
    payments: set[int] = field(default_factory=set)


# ---------------------------------------------------------------------------- reading


_reader_owner: tuple[int, ThreadPoolExecutor] | None = None


def _reader() -> ThreadPoolExecutor:
    """This process's one reading thread (made after a fork, not inherited): it keeps its own
    kept-alive HTTP session (rpc._session) from one scan to the next."""
    global _reader_owner
    if _reader_owner is None or _reader_owner[0] != os.getpid():
        _reader_owner = (os.getpid(), ThreadPoolExecutor(1, thread_name_prefix="chain-reader"))
    return _reader_owner[1]


def _chunks(
    client: ChainClient,
    start: int,
    end: int,
    *,
    to_address=None,
    lease=None,
    raw=False,
    ahead=False,
):
    """Transfer logs of the configured tokens in [start, end], one chunk of MAX_CHUNK blocks
    at a time (TransferLogs, or with `raw` as the node sent them), the chunk halved while the
    provider refuses the range; the lease is renewed between chunks. With `ahead`, the next
    chunk is asked of the node (on the reading thread, which touches no database) while the
    caller works on this one: the node's time to answer hides the caller's."""
    chunk, block = MAX_CHUNK, start
    options = {"raw": True} if raw else {}

    def ask(first: int, last: int):
        return client.transfer_logs(
            from_block=first, to_block=last, to_address=to_address, **options
        )

    pending: tuple[int, int, Future] | None = None
    try:
        while block <= end:
            if lease is not None:
                lease.renew()
            last = min(block + chunk - 1, end)
            asked, pending = pending, None
            try:
                if asked is not None and asked[:2] == (block, last):
                    found = asked[2].result()
                else:
                    found = ask(block, last)
            except RangeTooLarge:
                if chunk == 1:
                    raise
                chunk = max(1, chunk // 2)
                continue
            if ahead and last < end:
                following = (last + 1, min(last + chunk, end))
                pending = (*following, _reader().submit(ask, *following))
            yield found
            block = last + 1
    finally:
        if pending is not None:
            pending[2].cancel()
            wait([pending[2]])  # a request under way finishes (its own timeout) before we go


def _read_logs(
    client: ChainClient,
    start: int,
    end: int,
    *,
    to_address: str | None = None,
    lease: Lease | None = None,
) -> list[TransferLog]:
    """Every Transfer log of the configured tokens in [start, end] (to `to_address` alone
    when given), parsed."""
    logs: list[TransferLog] = []
    for found in _chunks(client, start, end, to_address=to_address, lease=lease):
        logs += found
    return logs


def _read_ours(
    client: ChainClient, start: int, end: int, *, lease: Lease
) -> tuple[list[TransferLog], dict[str, Recipient]]:
    """The Transfer logs in [start, end] to our deposit addresses, parsed, and those
    addresses: each chunk's recipients are looked up as it arrives and only our logs are kept,
    so a busy token's thousands of other logs leave with their chunk (held all at once, they
    outlived three of the cycle collector's young generations and were walked again at each:
    bench/watcher.py); the node reads the next chunk meanwhile (_chunks' `ahead`)."""
    logs: list[TransferLog] = []
    ours: dict[str, Recipient] = {}
    for found in _chunks(client, start, end, lease=lease, raw=True, ahead=True):
        paid = transfer_recipients(found)
        here = recipients(set(paid) - {None})
        if here:
            ours |= here
            logs += [parse_transfer(log) for log, to in zip(found, paid, strict=True) if to in here]
    return logs, ours


def earliest_watched_block(network_key: str, *, end: int) -> int | None:
    """The head block when the oldest still-watched payment of the network was opened (a
    payment opened while the node did not answer counts as DECLARATION_LOOKBACK_BLOCKS back)."""
    watched = CryptoPayment.objects.filter(network=network_key, status__in=WATCHED_STATUSES)
    first = watched.aggregate(first=Min("created_block"))["first"]
    if watched.filter(created_block__isnull=True).exists():
        fallback = max(0, end - DECLARATION_LOOKBACK_BLOCKS)
        first = fallback if first is None else min(first, fallback)
    return first


def _fresh_start(network: Network, end: int) -> int:
    """Where a cursor with no usable history starts: at the oldest watched payment's
    creation block, else a little before the head (no payment existed earlier)."""
    earliest = earliest_watched_block(network.key, end=end)
    if earliest is not None and earliest <= end:
        return earliest
    return max(0, end - network.confirmations - 10)


def fork_point(client: ChainClient, network_key: str, *, below: int, lease=None) -> int | None:
    """The newest stored block (numbered below `below`) whose hash the chain still has."""
    stored = ChainBlock.objects.filter(network=network_key, number__lt=below).order_by("-number")
    offset = 0
    while True:
        if lease is not None:
            lease.renew()
        rows = list(stored.values_list("number", "hash")[offset : offset + FORK_WALK_BATCH])
        if not rows:
            return None
        current = client.blocks({number for number, _ in rows}, missing_ok=True)
        for number, stored_hash in rows:
            if current.get(number, ("",))[0] == stored_hash:
                return number
        offset += FORK_WALK_BATCH


def _head_and_tip(client: ChainClient, tip: int | None) -> tuple[Block, int, str, Block | None]:
    """(head block, last block to read, its hash, the block before the cursor) in one batch."""
    latest, blocks = client.latest_and([] if tip is None else [tip])
    end = latest.number - HEAD_LAG
    if HEAD_LAG == 0:
        end_hash = latest.hash
    elif HEAD_LAG == 1:
        end_hash = latest.parent_hash
    else:
        end_hash = client.block(end)[0] if end >= 0 else ""
    return latest, end, end_hash, blocks.get(tip)


def scan_network(*, network_key: str) -> ScanReport:
    """One scan: read new Transfer logs up to HEAD_LAG blocks behind the head, store those to
    our deposit addresses, advance the cursor, then confirm what has N confirmations.

    Raises RpcError when the node cannot be read (nothing is written, the cursor stays).

    The cycle collector is paused for the scan (rpc.collector_paused): the node's answers and
    the rows written are thousands of short-lived objects and no cycles, and a collection
    during a scan walked them for nothing (bench/watcher.py); what a scan leaves in a cycle is
    collected after it.
    """
    with collector_paused():
        return _scan(network_key)


def _scan(network_key: str) -> ScanReport:
    report = ScanReport(network=network_key)
    network = get_network(network_key)
    claimed = claim(network_key)
    if claimed is None:
        report.skipped = True
        return report
    cursor, lease = claimed
    vanished: list[int] = []
    known_hashes: dict[int, str] = {}
    try:
        client = ChainClient(network)
        start = cursor.next_block
        tip = start - 1 if cursor.last_block_hash and start > 0 else None
        latest, end, end_hash, tip_block = _head_and_tip(client, tip)
        head = latest.number
        if (cursor.next_block == 0 and not cursor.last_block_hash) or start > head:
            # A cursor that never scanned, or a chain reset under us (a development chain
            # restarted from genesis).
            start = _fresh_start(network, end)
        elif tip is not None and (tip_block is None or tip_block.hash != cursor.last_block_hash):
            report.fork_point = fork_point(client, network_key, below=start, lease=lease)
            start = (
                report.fork_point + 1
                if report.fork_point is not None
                else _fresh_start(network, end)
            )
        logs, ours = [], {}
        if start <= end:
            # Only the logs to our addresses are parsed (a busy token has thousands of others).
            logs, ours = _read_ours(client, start, end, lease=lease)
            # Current block hashes (once the read is checked below), for the confirmations.
            known_hashes = {log.block_number: log.block_hash for log in logs}
            known_hashes[end] = end_hash
        reread = report.fork_point is not None or start < cursor.next_block
        confirmed_numbers = _confirmed_numbers(network_key, start, head) if reread else set()
        missing = {log.block_number for log in logs if log.block_timestamp is None}
        after = client.block_headers(
            ({end} if start <= end else set()) | missing | confirmed_numbers
        )
        if start <= end and (after[end] is None or after[end].hash != end_hash):
            report.chain_moved = True  # the next scan reads again from the cursor
            lease.release(error=f"block {end} changed during the read (a reorganisation)")
            return report
        # Confirmed transfers after the fork: is their block still the one we stored?
        confirmed_hashes = {n: after[n].hash if after[n] else "" for n in confirmed_numbers}
        lease.renew()
        with transaction.atomic():
            locked = lock_cursor(network_key)
            if locked.lease_token != lease.token:
                return report  # our lease ran out and another scan took over
            stamped = [
                (log, log.block_timestamp or after[log.block_number].timestamp) for log in logs
            ]
            report.payments, report.stored = store_transfers(network, stamped, ours)
            if start <= end:
                if start < locked.next_block:
                    ChainBlock.objects.filter(network=network_key, number__gte=start).delete()
                checkpoint(
                    network_key, {end: end_hash, **{lg.block_number: lg.block_hash for lg in logs}}
                )
                prune_blocks(network, end=end)
                locked.next_block = end + 1
                locked.last_block_hash = end_hash
            vanished = _vanished(network_key, confirmed_hashes)
            locked.last_scan_at, locked.last_head, locked.last_error_at = timezone.now(), head, None
            locked.lease_token, locked.lease_until, locked.last_error = "", None, ""
            locked.save()
        report.from_block, report.to_block = (start, end) if start <= end else (None, None)
    except LeaseLost:
        return report
    except RpcError as exc:
        lease.release(error=str(exc))
        raise
    except BaseException as exc:
        lease.release(error=f"{type(exc).__name__}: {exc}")
        raise
    report.reversed = transfers_reversed(transfer_ids=vanished)
    confirmed, reorged = confirm_transfers(
        network_key=network_key, client=client, head=head, known_hashes=known_hashes
    )
    report.confirmed, report.reorged = confirmed, reorged
    return report


def _confirmed_numbers(network_key: str, start: int, head: int) -> set[int]:
    numbers = ChainTransfer.objects.filter(
        network=network_key, status=TransferStatus.CONFIRMED, block_number__gte=start
    ).values_list("block_number", flat=True)
    return {n for n in numbers if n <= head}


def _vanished(network_key: str, chain_hashes: dict[int, str]) -> list[int]:
    """Confirmed transfers whose block the chain no longer has (after this scan stored what it
    found again: a transfer included again elsewhere has moved and is not among them)."""
    if not chain_hashes:
        return []
    return [
        pk
        for pk, number, stored_hash in ChainTransfer.objects.filter(
            network=network_key,
            status=TransferStatus.CONFIRMED,
            block_number__in=list(chain_hashes),
        ).values_list("pk", "block_number", "block_hash")
        if chain_hashes[number] != stored_hash
    ]


# ----------------------------------------------------------------------- declarations


def payment_check(*, payment_id: int) -> ScanReport:
    """The customer declared a payment: look now. With a transaction hash, read that receipt;
    without, read the address's Transfer logs since shortly before the payment was created."""
    payment = CryptoPayment.objects.select_related("deposit_address").get(pk=payment_id)
    network = get_network(payment.network)
    client = ChainClient(network)
    report = ScanReport(network=network.key)
    head = client.head()
    address = payment.deposit_address.address.lower()
    if payment.declared_tx_hash:
        logs = [
            log
            for log in client.receipt_logs(payment.declared_tx_hash)
            if log.to_address == address
        ]
    else:
        # From the block the payment was opened in (a little before where the scan stands
        # for payments opened before that was recorded).
        if payment.created_block is not None:
            start = min(payment.created_block, head)
        else:
            cursor = ChainCursor.objects.filter(network=network.key).first()
            scanned_to = cursor.next_block if cursor and cursor.next_block else head
            start = max(0, min(scanned_to, head) - DECLARATION_LOOKBACK_BLOCKS)
        logs = _read_logs(client, start, head, to_address=address)
    blocks = client.blocks({log.block_number for log in logs})
    # A block that is gone already is left to the scan, which will find the new one.
    current = [
        (log, blocks[log.block_number][1])
        for log in logs
        if blocks[log.block_number][0] == log.block_hash
    ]
    with transaction.atomic():
        report.payments, report.stored = store_transfers(network, current)
    report.confirmed, report.reorged = confirm_transfers(
        network_key=network.key, client=client, head=head
    )
    return report
