"""Scanning: read the token contracts' Transfer logs and store those to our deposit addresses.

A scan never holds a row lock during an RPC call. It claims the network's cursor with a short
lease (taken under `skip_locked`, so a second scan of the same network skips instead of
waiting), renews the lease while it reads, and writes what it read in one short transaction.
A scan killed mid-way leaves a lease that runs out within PAYMENT_SCAN_LEASE_SECONDS, and the
next scan takes over from the cursor.

Reorganisations: the scan keeps the hash of its last block and of every block holding one of
our transfers (ChainBlock). When the block before the cursor has another hash, it walks back
through those to the newest block the chain still has — the fork point — and reads again from
there, however deep. A transfer found again in another block moves there; a confirmed transfer
whose block is gone is reversed (payments.services.confirming.transfers_reversed).
"""

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache

from django.conf import settings
from django.db import transaction
from django.db.models import Min
from django.db.models.functions import Lower
from django.utils import timezone
from web3 import Web3

from ..chain.rpc import ChainClient, RangeTooLarge, RpcError, TransferLog
from ..locks import lock_cursor, lock_payments
from ..models import (
    WATCHED_STATUSES,
    ChainBlock,
    ChainCursor,
    ChainTransfer,
    CryptoPayment,
    DepositAddress,
    PaymentEvent,
    PaymentEventKind,
    TransferStatus,
)
from ..networks import HEAD_LAG, Network, get_network
from .confirming import confirm_transfers, transfers_reversed
from .settling import settle_seen

MAX_CHUNK = 2000  # blocks per eth_getLogs; halved on a provider range error
DECLARATION_LOOKBACK_BLOCKS = 5000  # "I have paid" without a hash: read this far back
FORK_WALK_BATCH = 32  # stored block hashes compared per RPC batch when walking back


class LeaseLost(Exception):
    """Another scan took the cursor over (ours ran out): stop, write nothing."""


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
    payments: set[int] = field(default_factory=set)


def lease_duration() -> timedelta:
    return timedelta(seconds=settings.PAYMENT_SCAN_LEASE_SECONDS)


# --------------------------------------------------------------------------- the lease


class Lease:
    """The claim of one scan on a network's cursor, renewed while the scan runs."""

    def __init__(self, network_key: str, token: str, until: datetime):
        self.network_key, self.token, self.until = network_key, token, until

    def renew(self) -> None:
        """Push the lease on when a third of it has passed; LeaseLost when it was taken."""
        now = timezone.now()
        if self.until - now > lease_duration() * 2 / 3:
            return
        until = now + lease_duration()
        if not ChainCursor.objects.filter(network=self.network_key, lease_token=self.token).update(
            lease_until=until
        ):
            raise LeaseLost(self.network_key)
        self.until = until

    def release(self, *, error: str = "") -> None:
        ChainCursor.objects.filter(network=self.network_key, lease_token=self.token).update(
            lease_token="", lease_until=None, last_error=error[:500]
        )


def claim(network_key: str, *, now: datetime | None = None) -> tuple[ChainCursor, Lease] | None:
    """Take the network's cursor for one scan, or None while another scan's lease runs."""
    now = now or timezone.now()
    with transaction.atomic():
        ChainCursor.objects.get_or_create(network=network_key, defaults={"next_block": 0})
        cursor = lock_cursor(network_key, skip_locked=True)
        if cursor is None or (cursor.lease_until and cursor.lease_until > now):
            return None
        token = str(uuid.uuid4())
        cursor.lease_token, cursor.lease_until = token, now + lease_duration()
        cursor.save(update_fields=["lease_token", "lease_until"])
    return cursor, Lease(network_key, token, cursor.lease_until)


# ---------------------------------------------------------------------------- reading


def _read_logs(
    client: ChainClient,
    start: int,
    end: int,
    *,
    to_address: str | None = None,
    lease: Lease | None = None,
) -> list[TransferLog]:
    """Transfer logs of the configured tokens in [start, end], in chunks of MAX_CHUNK blocks,
    halved while the provider refuses the range; the lease is renewed between chunks."""
    logs, chunk, block = [], MAX_CHUNK, start
    while block <= end:
        if lease is not None:
            lease.renew()
        last = min(block + chunk - 1, end)
        try:
            logs += client.transfer_logs(from_block=block, to_block=last, to_address=to_address)
        except RangeTooLarge:
            if chunk == 1:
                raise
            chunk = max(1, chunk // 2)
            continue
        block = last + 1
    return logs


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


def scan_network(*, network_key: str) -> ScanReport:
    """One scan: read new Transfer logs up to HEAD_LAG blocks behind the head, store those to
    our deposit addresses, advance the cursor, then confirm what has N confirmations.

    Raises RpcError when the node cannot be read (nothing is written, the cursor stays).
    """
    report = ScanReport(network=network_key)
    network = get_network(network_key)
    claimed = claim(network_key)
    if claimed is None:
        report.skipped = True
        return report
    cursor, lease = claimed
    vanished: list[int] = []
    try:
        client = ChainClient(network)
        head = client.head()
        end = head - HEAD_LAG
        start = cursor.next_block
        if (cursor.next_block == 0 and not cursor.last_block_hash) or start > head:
            # A cursor that never scanned, or a chain reset under us (a development chain
            # restarted from genesis).
            start = _fresh_start(network, end)
        elif cursor.last_block_hash and start > 0:
            tip_hash, _ = client.block(start - 1)
            if tip_hash != cursor.last_block_hash:
                report.fork_point = fork_point(client, network_key, below=start, lease=lease)
                start = (
                    report.fork_point + 1
                    if report.fork_point is not None
                    else _fresh_start(network, end)
                )
        logs, end_hash, blocks, confirmed_hashes = [], cursor.last_block_hash, {}, {}
        if start <= end:
            logs = _read_logs(client, start, end, lease=lease)
            end_hash, _ = client.block(end)
            ours = _our_addresses({log.to_address for log in logs})
            logs = [log for log in logs if log.to_address in ours]
            missing = {log.block_number for log in logs if log.block_timestamp is None}
            blocks = client.blocks(missing) if missing else {}
        if report.fork_point is not None or start < cursor.next_block:
            # Confirmed transfers after the fork: is their block still the one we stored?
            confirmed_hashes = _confirmed_block_hashes(client, network_key, start, head)
        lease.renew()
        with transaction.atomic():
            locked = lock_cursor(network_key)
            if locked.lease_token != lease.token:
                return report  # our lease ran out and another scan took over
            stamped = [(log, log.block_timestamp or blocks[log.block_number][1]) for log in logs]
            report.payments, report.stored = store_transfers(network, stamped)
            if start <= end:
                if start < locked.next_block:
                    ChainBlock.objects.filter(network=network_key, number__gte=start).delete()
                _checkpoint(
                    network_key, {end: end_hash, **{lg.block_number: lg.block_hash for lg in logs}}
                )
                locked.next_block = end + 1
                locked.last_block_hash = end_hash
            vanished = _vanished(network_key, confirmed_hashes)
            locked.last_scan_at = timezone.now()
            locked.lease_token, locked.lease_until, locked.last_error = "", None, ""
            locked.save()
        report.from_block, report.to_block = (start, end) if start <= end else (None, None)
    except LeaseLost:
        return report
    except RpcError as exc:
        lease.release(error=str(exc))
        raise
    except BaseException:
        lease.release()
        raise
    report.reversed = transfers_reversed(transfer_ids=vanished)
    confirmed, reorged = confirm_transfers(network_key=network_key, client=client, head=head)
    report.confirmed, report.reorged = confirmed, reorged
    return report


def _confirmed_block_hashes(client, network_key: str, start: int, head: int) -> dict[int, str]:
    numbers = set(
        ChainTransfer.objects.filter(
            network=network_key, status=TransferStatus.CONFIRMED, block_number__gte=start
        ).values_list("block_number", flat=True)
    )
    numbers = {n for n in numbers if n <= head}
    current = client.blocks(numbers, missing_ok=True) if numbers else {}
    return {number: current.get(number, ("",))[0] for number in numbers}


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


def _checkpoint(network_key: str, hashes: dict[int, str]) -> None:
    ChainBlock.objects.bulk_create(
        [ChainBlock(network=network_key, number=n, hash=h) for n, h in hashes.items() if h],
        update_conflicts=True,
        unique_fields=["network", "number"],
        update_fields=["hash"],
    )


# ---------------------------------------------------------------------------- storing


@lru_cache(maxsize=8192)
def _checksum(address: str) -> str:
    return Web3.to_checksum_address(address)


def _our_addresses(candidates: set[str]) -> set[str]:
    """Which of these lower-case addresses are our deposit addresses (an index on lower())."""
    if not candidates:
        return set()
    return set(
        DepositAddress.objects.annotate(lower=Lower("address"))
        .filter(lower__in=candidates)
        .values_list("lower", flat=True)
    )


def store_transfers(network: Network, logs: list[tuple[TransferLog, int]]) -> tuple[set[int], int]:
    """Store logs (inside the caller's transaction) with a fixed number of queries and recount
    the payments they concern (settling.settle_seen); return those payments' ids and how many
    rows changed. A log read twice is stored once; a log seen again in another block (included
    again after a reorganisation) moves to that block and is confirmed again there — counted
    once."""
    if not logs:
        return set(), 0
    payments = {
        address.lower(): (payment_id, expires_at, address)
        for address, payment_id, expires_at in CryptoPayment.objects.annotate(
            lower=Lower("deposit_address__address")
        )
        .filter(lower__in={log.to_address for log, _ in logs})
        .values_list("deposit_address__address", "pk", "expires_at")
    }
    existing = {
        (row.tx_hash, row.log_index): row
        for row in ChainTransfer.objects.filter(
            chain_id=network.chain_id, tx_hash__in={log.tx_hash for log, _ in logs}
        )
    }
    new, moved, touched = [], [], set()
    for log, timestamp in logs:
        block_time = datetime.fromtimestamp(timestamp, tz=UTC)
        payment_id, expires_at, to_address = payments.get(log.to_address, (None, None, None))
        row = existing.get((log.tx_hash, log.log_index))
        if row is None:
            new.append(
                ChainTransfer(
                    network=network.key,
                    chain_id=network.chain_id,
                    tx_hash=log.tx_hash,
                    log_index=log.log_index,
                    block_number=log.block_number,
                    block_hash=log.block_hash,
                    block_timestamp=block_time,
                    token_address=_checksum(log.token_address),
                    from_address=_checksum(log.from_address),
                    to_address=to_address or _checksum(log.to_address),
                    amount_units=log.amount_units,
                    payment_id=payment_id,
                    late=expires_at is not None and block_time > expires_at,
                )
            )
        elif row.block_hash != log.block_hash:
            row.block_number, row.block_hash, row.block_timestamp = (
                log.block_number,
                log.block_hash,
                block_time,
            )
            row.status = TransferStatus.SEEN
            row.late = expires_at is not None and block_time > expires_at
            moved.append(row)
        else:
            continue
        if payment_id:
            touched.add(payment_id)
    created = ChainTransfer.objects.bulk_create(new, ignore_conflicts=True)
    if moved:
        ChainTransfer.objects.bulk_update(
            moved, ["block_number", "block_hash", "block_timestamp", "status", "late"]
        )
    if touched:
        locked = lock_payments(touched)
        PaymentEvent.objects.bulk_create(
            PaymentEvent(
                payment_id=transfer.payment_id,
                kind=PaymentEventKind.SEEN,
                data={
                    "tx_hash": transfer.tx_hash,
                    "block": transfer.block_number,
                    "units": str(transfer.amount_units),
                },
            )
            for transfer in [*created, *moved]
            if transfer.payment_id
        )
        settle_seen(locked, touched=touched)
    return touched, len(new) + len(moved)


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
