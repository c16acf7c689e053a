"""Storing what a scan read: the Transfer logs to our deposit addresses, and the block hashes
the next scan compares against (ChainBlock).

Everything is written in a fixed number of statements whatever the number of logs: rows go in
as plain values through `payments.bulk` (no model instance per row), and payments that saw a
transfer are recounted and stepped between waiting and seen by the crypto room's settling
(payments.chain.settlement.settle_seen).
"""

from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

from django.db import connection
from django.db.models.expressions import RawSQL
from django.db.models.functions import Lower
from django.utils import timezone

from ..bulk import insert_rows
from ..locks import lock_payments
from ..models import (
    ChainBlock,
    ChainTransfer,
    CryptoPayment,
    DepositAddress,
    PaymentEvent,
    PaymentEventKind,
    TransferStatus,
)
from .networks import Network
from .rpc import TransferLog
from .settlement import settle_seen
from .transfer_status import transfers_set_status

# Block hashes kept per network beyond its confirmations, for the walk back to a fork point:
# a reorganisation deeper than this finds no stored block and the scan reads again from the
# oldest watched payment's creation block (scanning._fresh_start).
BLOCKS_KEPT_BEYOND_CONFIRMATIONS = 10_000


@dataclass(frozen=True, slots=True)
class Recipient:
    address: str  # as stored (checksummed)
    payment_id: int | None
    expires_at: datetime | None


def recipients(candidates: set[str]) -> dict[str, Recipient]:
    """Which of these lower-case addresses are our deposit addresses, with their payments (one
    query, on the index of lower(address))."""
    if not candidates:
        return {}
    if connection.vendor != "postgresql":
        rows = (
            DepositAddress.objects.annotate(lower=Lower("address"))
            .filter(lower__in=candidates)
            .values_list("lower", "address", "payment__pk", "payment__expires_at")
        )
    else:
        # The candidates as one text parameter, not a placeholder each (a scan has thousands).
        link = CryptoPayment._meta.get_field("deposit_address").column
        sql = (
            "SELECT lower(a.address), a.address, p.id, p.expires_at"  # noqa: S608
            f" FROM {DepositAddress._meta.db_table} a LEFT JOIN {CryptoPayment._meta.db_table} p"
            f" ON p.{link} = a.id JOIN unnest(string_to_array(%s, ',')) AS c(address)"
            " ON lower(a.address) = c.address"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [",".join(candidates)])
            rows = cursor.fetchall()
    return {
        lower: Recipient(address, payment_id, expires_at)
        for lower, address, payment_id, expires_at in rows
    }


def _one_parameter(values: set[str]):
    """For a `__in` lookup: these strings as one text parameter on PostgreSQL (a placeholder
    each costs more than the lookup), else as they are."""
    if connection.vendor != "postgresql":
        return values
    return RawSQL("SELECT unnest(string_to_array(%s, ','))", [",".join(values)])


@lru_cache(maxsize=8192)
def _checksum(address: str) -> str:
    from eth_utils import to_checksum_address  # the worker's library: not on the web path

    return to_checksum_address(address)


NEW_TRANSFER_FIELDS = (
    "network",
    "chain_id",
    "tx_hash",
    "log_index",
    "block_number",
    "block_hash",
    "block_timestamp",
    "token_address",
    "from_address",
    "to_address",
    "amount_units",
    "payment",
    "status",
    "late",
    "receipted",
    "seen_at",
)
SEEN_EVENT_FIELDS = ("payment", "kind", "from_status", "to_status", "actor", "reason", "data")


def store_transfers(
    network: Network,
    logs: list[tuple[TransferLog, int]],
    known: dict[str, Recipient] | None = None,
) -> tuple[set[int], int]:
    """Store logs (with their block's unix time), inside the caller's transaction, and recount
    the payments they concern; return those payments' ids and how many rows changed. `known`:
    the recipients already looked up (else looked up here). A log read twice is stored once; a
    log seen again in another block (included again after a reorganisation) moves to that
    block and is confirmed again there — counted once."""
    if not logs:
        return set(), 0
    if known is None:
        known = recipients({log.to_address for log, _ in logs})
    existing = {
        (row.tx_hash, row.log_index): row
        for row in ChainTransfer.objects.filter(
            chain_id=network.chain_id, tx_hash__in=_one_parameter({log.tx_hash for log, _ in logs})
        )
    }
    new, moved = [], []
    for log, timestamp in logs:
        recipient = known.get(log.to_address) or Recipient(_checksum(log.to_address), None, None)
        block_time = datetime.fromtimestamp(timestamp, tz=UTC)
        late = recipient.expires_at is not None and block_time > recipient.expires_at
        row = existing.get((log.tx_hash, log.log_index))
        if row is None:
            new.append((log, recipient, block_time, late))
        elif row.block_hash != log.block_hash:
            row.block_number, row.block_hash, row.block_timestamp = (
                log.block_number,
                log.block_hash,
                block_time,
            )
            row.late = late
            moved.append(row)
    if not new and not moved:
        return set(), 0
    # Payments before transfers (payments.locks): inserting a transfer takes a key-share lock
    # on its payment, which must not come before our own lock on it.
    touched = {r.payment_id for _, r, _, _ in new if r.payment_id}
    touched |= {row.payment_id for row in moved if row.payment_id}
    locked = lock_payments(touched)
    now = timezone.now()
    written = insert_rows(
        ChainTransfer,
        NEW_TRANSFER_FIELDS,
        [
            (
                network.key,
                network.chain_id,
                log.tx_hash,
                log.log_index,
                log.block_number,
                log.block_hash,
                block_time,
                _checksum(log.token_address),
                _checksum(log.from_address),
                recipient.address,
                log.amount_units,
                recipient.payment_id,
                TransferStatus.SEEN,
                late,
                False,
                now,
            )
            for log, recipient, block_time, late in new
        ],
        ignore_conflicts=True,  # stored meanwhile by a declaration's check
        returning=("payment", "tx_hash", "block_number", "amount_units"),
    )
    transfers_set_status(
        [(row, TransferStatus.SEEN) for row in moved],
        also_fields=["block_number", "block_hash", "block_timestamp", "late"],
    )
    seen = [*written, *((r.payment_id, r.tx_hash, r.block_number, r.amount_units) for r in moved)]
    insert_rows(
        PaymentEvent,
        (*SEEN_EVENT_FIELDS, "created_at"),
        [
            (
                payment_id,
                PaymentEventKind.SEEN,
                "",
                "",
                None,
                "",
                {"tx_hash": tx_hash, "block": block, "units": str(units)},
                now,
            )
            for payment_id, tx_hash, block, units in seen
            if payment_id
        ],
    )
    settle_seen(locked, touched=touched)
    return touched, len(written) + len(moved)


def checkpoint(network_key: str, hashes: dict[int, str]) -> None:
    """Store these block hashes (the scan's last block, the blocks holding our transfers)."""
    insert_rows(
        ChainBlock,
        ("network", "number", "hash"),
        [(network_key, number, block_hash) for number, block_hash in hashes.items() if block_hash],
        upsert=(("network", "number"), ("hash",)),
    )


def prune_blocks(network: Network, *, end: int) -> None:
    """Forget block hashes older than any walk back needs."""
    keep_from = end - network.confirmations - BLOCKS_KEPT_BEYOND_CONFIRMATIONS
    if keep_from > 0:
        ChainBlock.objects.filter(network=network.key, number__lt=keep_from).delete()
