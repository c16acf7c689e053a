"""The chain watcher: read Transfer logs, confirm them at N blocks, settle payments.

A scan never holds a row lock during an RPC call: it claims the network's cursor with a lease
(taken under `skip_locked`, so a second scan of the same network skips instead of waiting),
does its RPC reads with no lock held, then writes what it read and advances the cursor in one
short transaction. Transfers are unique on (chain id, tx hash, log index), so a log read twice
is stored once. A transfer counts once it has N confirmations and its block hash is still the
one stored; a changed hash before that marks it reorged and its payment steps back.
"""

import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import lru_cache

from django.db import transaction
from django.db.models import Case, F, OuterRef, Subquery, Sum, Value, When
from django.db.models.functions import Coalesce, Lower
from django.utils import timezone
from web3 import Web3

from rental import services as rental_services
from rental.models import OrderStatus

from ..chain.rpc import ChainClient, RangeTooLarge, RpcError, TransferLog
from ..models import (
    ChainCursor,
    ChainTransfer,
    CryptoPayment,
    DepositAddress,
    LedgerAccountKind,
    PaymentEvent,
    PaymentPurpose,
    PaymentStatus,
    ReviewReason,
    TransactionKind,
    TransferReview,
    TransferStatus,
)
from ..networks import Network, confirmations_at, get_network, units_to_usd
from .events import payment_event
from .ledger import customer_account, ledger_post, lock_accounts, system_account

HEAD_LAG = 1  # read up to one block behind the head
MAX_CHUNK = 2000  # blocks per eth_getLogs; halved on a provider range error
DECLARATION_LOOKBACK_BLOCKS = 5000  # "I have paid" without a hash: read this far back
LEASE = timedelta(minutes=4)  # below the task time limit
OPEN_STATUSES = (PaymentStatus.AWAITING, PaymentStatus.DETECTED)


@dataclass
class ScanReport:
    network: str
    from_block: int | None = None
    to_block: int | None = None
    stored: int = 0
    confirmed: int = 0
    reorged: int = 0
    skipped: bool = False
    payments: set[int] = field(default_factory=set)


# ----------------------------------------------------------------------------- scanning


def _claim(network_key: str) -> tuple[ChainCursor, str] | None:
    now = timezone.now()
    with transaction.atomic():
        ChainCursor.objects.get_or_create(network=network_key, defaults={"next_block": 0})
        cursor = (
            ChainCursor.objects.select_for_update(skip_locked=True)
            .filter(network=network_key)
            .first()
        )
        if cursor is None or (cursor.lease_until and cursor.lease_until > now):
            return None
        token = str(uuid.uuid4())
        cursor.lease_token, cursor.lease_until = token, now + LEASE
        cursor.save(update_fields=["lease_token", "lease_until"])
    return cursor, token


def _release(network_key: str, token: str, *, error: str = "") -> None:
    ChainCursor.objects.filter(network=network_key, lease_token=token).update(
        lease_token="", lease_until=None, last_error=error[:500]
    )


def _read_logs(
    client: ChainClient, start: int, end: int, *, to_address: str | None = None
) -> list[TransferLog]:
    """Transfer logs of the configured tokens in [start, end], in chunks of MAX_CHUNK blocks,
    halved while the provider refuses the range."""
    logs, chunk, block = [], MAX_CHUNK, start
    while block <= end:
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


def scan_network(*, network_key: str) -> ScanReport:
    """One scan: read new Transfer logs up to HEAD_LAG blocks behind the head, store those to
    our deposit addresses, advance the cursor, then confirm what has N confirmations.

    Raises RpcError when the node cannot be read (nothing is written, the cursor stays).
    """
    report = ScanReport(network=network_key)
    network = get_network(network_key)
    claimed = _claim(network_key)
    if claimed is None:
        report.skipped = True
        return report
    cursor, token = claimed
    try:
        client = ChainClient(network)
        head = client.head()
        end = head - HEAD_LAG
        start = cursor.next_block
        if cursor.next_block == 0 and not cursor.last_block_hash:
            # A new cursor starts a little before the head: no payment existed earlier.
            start = max(0, end - network.confirmations - 10)
        elif start > head:
            # The chain was reset under us (a development chain restarted from genesis).
            start = max(0, end - network.confirmations - 10)
        elif cursor.last_block_hash and start > 0:
            tip_hash, _ = client.block(start - 1)
            if tip_hash != cursor.last_block_hash:
                # The chain reorganised under the cursor: read the confirmation window again.
                start = max(0, start - network.confirmations - 1)
        logs, end_hash, blocks = [], cursor.last_block_hash, {}
        if start <= end:
            logs = _read_logs(client, start, end)
            end_hash, _ = client.block(end)
            ours = _our_addresses({log.to_address for log in logs})
            logs = [log for log in logs if log.to_address in ours]
            missing = {log.block_number for log in logs if log.block_timestamp is None}
            blocks = client.blocks(missing) if missing else {}
        with transaction.atomic():
            locked = ChainCursor.objects.select_for_update().get(network=network_key)
            if locked.lease_token != token:
                return report  # our lease ran out and another scan took over
            stamped = [(log, log.block_timestamp or blocks[log.block_number][1]) for log in logs]
            report.payments, report.stored = _store_many(network, stamped)
            if start <= end:
                locked.next_block = end + 1
                locked.last_block_hash = end_hash
            locked.last_scan_at = timezone.now()
            locked.lease_token, locked.lease_until, locked.last_error = "", None, ""
            locked.save()
        report.from_block, report.to_block = (start, end) if start <= end else (None, None)
    except RpcError as exc:
        _release(network_key, token, error=str(exc))
        raise
    except BaseException:
        _release(network_key, token)
        raise
    confirmed, reorged = confirm_transfers(network_key=network_key, client=client, head=head)
    report.confirmed, report.reorged = confirmed, reorged
    return report


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


def _store_many(network: Network, logs: list[tuple[TransferLog, int]]) -> tuple[set[int], int]:
    """Store logs (inside the caller's transaction) with a fixed number of queries; return the
    ids of the payments they concern. A log read twice is stored once; a log seen again in
    another block (re-included after a reorganisation) moves to that block."""
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
        elif row.status != TransferStatus.CONFIRMED and row.block_hash != log.block_hash:
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
    ChainTransfer.objects.bulk_create(new, ignore_conflicts=True)
    if moved:
        ChainTransfer.objects.bulk_update(
            moved, ["block_number", "block_hash", "block_timestamp", "status", "late"]
        )
    if touched:
        _seen_many(touched, new + moved)
    return touched, len(new) + len(moved)


def _seen_many(payment_ids: set[int], transfers: list[ChainTransfer]) -> None:
    """Lock the payments (pk order), recount them in one UPDATE, record the events."""
    list(
        CryptoPayment.objects.select_for_update(of=("self",))
        .filter(pk__in=payment_ids)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    CryptoPayment.objects.filter(pk__in=payment_ids).update(
        seen_units=_units_of(TransferStatus.SEEN),
        received_units=_units_of(TransferStatus.CONFIRMED),
        status=Case(
            When(status=PaymentStatus.AWAITING, then=Value(PaymentStatus.DETECTED)),
            default=F("status"),
        ),
        updated_at=timezone.now(),
    )
    PaymentEvent.objects.bulk_create(
        PaymentEvent(
            payment_id=transfer.payment_id,
            kind="seen",
            data={
                "tx_hash": transfer.tx_hash,
                "block": transfer.block_number,
                "units": str(transfer.amount_units),
            },
        )
        for transfer in transfers
        if transfer.payment_id
    )


def _units_of(status: str):
    """Sum of the payment's counted transfers in `status` (a correlated subquery)."""
    total = (
        ChainTransfer.objects.filter(payment=OuterRef("pk"), status=status, review_state="")
        .order_by()
        .values("payment")
        .annotate(units=Sum("amount_units"))
        .values("units")
    )
    return Coalesce(Subquery(total), Value(Decimal(0)))


def _recount(payment: CryptoPayment) -> None:
    totals = {
        row["status"]: row["units"] or 0
        for row in ChainTransfer.objects.filter(payment=payment)
        .exclude(
            review_state__in=[TransferReview.OPEN, TransferReview.CREDITED, TransferReview.INVALID]
        )
        .values("status")
        .annotate(units=Sum("amount_units"))
    }
    payment.seen_units = totals.get(TransferStatus.SEEN, 0)
    payment.received_units = totals.get(TransferStatus.CONFIRMED, 0)


# ------------------------------------------------------------------------- confirming


def confirm_transfers(
    *, network_key: str, client: ChainClient | None = None, head: int | None = None
) -> tuple[int, int]:
    """Confirm seen transfers that have N confirmations and an unchanged block hash; mark
    those whose block hash changed as reorged. Returns (confirmed, reorged)."""
    network = get_network(network_key)
    client = client or ChainClient(network)
    head = head if head is not None else client.head()
    pending = list(
        ChainTransfer.objects.filter(network=network_key, status=TransferStatus.SEEN).values_list(
            "pk", "block_number", "block_hash"
        )
    )
    numbers = {number for _, number, _ in pending if number <= head}
    hashes = {number: info[0] for number, info in client.blocks(numbers).items()}
    confirmed = reorged = 0
    for transfer_id, number, stored_hash in pending:
        current = hashes.get(number)
        if current is None:
            continue
        if current != stored_hash:
            reorged += _mark_reorged(transfer_id, stored_hash)
        elif confirmations_at(head=head, block_number=number) >= network.confirmations:
            confirmed += _confirm(transfer_id, stored_hash)
    return confirmed, reorged


def _lock_transfer_and_payment(transfer_id: int):
    payment_id = (
        ChainTransfer.objects.filter(pk=transfer_id).values_list("payment_id", flat=True).first()
    )
    payment = None
    if payment_id:
        payment = CryptoPayment.objects.select_for_update(of=("self",)).get(pk=payment_id)
    transfer = ChainTransfer.objects.select_for_update().get(pk=transfer_id)
    return transfer, payment


def _mark_reorged(transfer_id: int, stored_hash: str) -> int:
    with transaction.atomic():
        transfer, payment = _lock_transfer_and_payment(transfer_id)
        if transfer.status != TransferStatus.SEEN or transfer.block_hash != stored_hash:
            return 0
        transfer.status = TransferStatus.REORGED
        transfer.save(update_fields=["status"])
        if payment is not None:
            _recount(payment)
            if payment.status == PaymentStatus.DETECTED and not (
                payment.seen_units or payment.received_units
            ):
                payment.status = PaymentStatus.AWAITING
            payment.save(update_fields=["status", "seen_units", "received_units", "updated_at"])
            payment_event(payment, "reorged", tx_hash=transfer.tx_hash, block=transfer.block_number)
    return 1


def _confirm(transfer_id: int, stored_hash: str) -> int:
    with transaction.atomic():
        transfer, payment = _lock_transfer_and_payment(transfer_id)
        if transfer.status != TransferStatus.SEEN or transfer.block_hash != stored_hash:
            return 0
        transfer.status = TransferStatus.CONFIRMED
        transfer.confirmed_at = timezone.now()
        fits = (
            payment is not None
            and (
                payment.status in OPEN_STATUSES
                or payment.status in (PaymentStatus.EXPIRED, PaymentStatus.NEEDS_REVIEW)
            )
            and transfer.block_timestamp <= payment.monitor_until
        )
        if not fits:
            # Monitoring ended, or the payment was already settled: operators decide.
            transfer.review_state = TransferReview.OPEN
        transfer.save(update_fields=["status", "confirmed_at", "review_state"])
        if payment is not None:
            # Every account this confirmation may touch, in primary-key order, before any post.
            lock_accounts(
                [
                    system_account(
                        LedgerAccountKind.CRYPTO_RECEIPTS,
                        asset=payment.asset,
                        network=payment.network,
                    ),
                    system_account(LedgerAccountKind.UNALLOCATED),
                    system_account(LedgerAccountKind.REVENUE),
                    customer_account(payment.customer),
                ]
            )
        _post_receipt(transfer, payment)
        if payment is not None:
            _recount(payment)
            payment.save(update_fields=["seen_units", "received_units", "updated_at"])
            payment_event(
                payment,
                "confirmed_transfer" if fits else "unmatched_transfer",
                tx_hash=transfer.tx_hash,
                units=str(transfer.amount_units),
            )
            if fits:
                _settle(payment, transfer)
    return 1


def _post_receipt(transfer: ChainTransfer, payment: CryptoPayment | None) -> None:
    """Record the money in the ledger: crypto receipts → receipts awaiting allocation."""
    network = get_network(transfer.network)
    decimals = payment.decimals if payment else 6
    amount = units_to_usd(transfer.amount_units, decimals)
    if amount <= 0:
        return
    asset = payment.asset if payment else transfer.token_address
    receipts = system_account(LedgerAccountKind.CRYPTO_RECEIPTS, asset=asset, network=network.key)
    unallocated = system_account(LedgerAccountKind.UNALLOCATED)
    ledger_post(
        kind=TransactionKind.CRYPTO_RECEIPT,
        lines=[(receipts, -amount), (unallocated, amount)],
        memo=f"{asset} on {network.key}: tx {transfer.tx_hash} log {transfer.log_index}",
        idempotency_key=f"receipt:{transfer.chain_id}:{transfer.tx_hash}:{transfer.log_index}",
        payment=payment,
        order=None,
    )


def received_usd(payment: CryptoPayment) -> Decimal:
    units = ChainTransfer.objects.filter(
        payment=payment, status=TransferStatus.CONFIRMED, review_state=""
    ).values_list("amount_units", flat=True)
    return sum((units_to_usd(u, payment.decimals) for u in units), Decimal("0.00"))


def _settle(payment: CryptoPayment, transfer: ChainTransfer) -> None:
    """Decide the payment from the sum of its confirmed transfers (payment row locked)."""
    if payment.status in (PaymentStatus.EXPIRED, PaymentStatus.NEEDS_REVIEW):
        if payment.status == PaymentStatus.EXPIRED:
            _to_review(payment, ReviewReason.PAID_LATE)
        return
    if payment.received_units < payment.amount_due_units:
        payment.status = PaymentStatus.DETECTED
        payment.save(update_fields=["status", "updated_at"])
        return  # the page shows what remains, at the same address
    late = ChainTransfer.objects.filter(
        payment=payment, status=TransferStatus.CONFIRMED, late=True
    ).exists()
    if late:
        _to_review(payment, ReviewReason.PAID_LATE)
        return
    if payment.order_id and payment.order.status != OrderStatus.AWAITING_PAYMENT:
        # Paid meanwhile by other means (the balance, another payment), or cancelled.
        paid = payment.order.status != OrderStatus.CANCELLED
        _to_review(payment, ReviewReason.OVERPAID if paid else ReviewReason.PAID_LATE)
        return
    allocate_to_purpose(payment, actor=None, reason="confirmed on chain")
    payment.status = PaymentStatus.CONFIRMED
    payment.confirmed_at = timezone.now()
    payment.save(update_fields=["status", "confirmed_at", "updated_at"])
    payment_event(payment, "payment_confirmed")


def _to_review(payment: CryptoPayment, reason: str) -> None:
    payment.status = PaymentStatus.NEEDS_REVIEW
    payment.review_reason = reason
    payment.save(update_fields=["status", "review_reason", "updated_at"])
    payment_event(payment, "review", reason=reason)
    if payment.order_id:
        order_status = payment.order.status
        if order_status == OrderStatus.AWAITING_PAYMENT:
            rental_services.order_set_status(
                order_id=payment.order_id,
                to_status=OrderStatus.PAYMENT_REVIEW,
                actor=None,
                reason=f"Payment {payment.reference}: {reason}",
            )


def credit_received_to_balance(
    payment: CryptoPayment, *, amount: Decimal, memo: str, idempotency_key: str, actor
) -> None:
    """Move received money from the receipts awaiting allocation to the customer's balance."""
    ledger_post(
        kind=TransactionKind.TOP_UP,
        lines=[
            (system_account(LedgerAccountKind.UNALLOCATED), -amount),
            (customer_account(payment.customer), amount),
        ],
        memo=memo,
        idempotency_key=idempotency_key,
        actor=actor,
        payment=payment,
    )


def allocate_to_purpose(payment: CryptoPayment, *, actor, reason: str) -> None:
    """Move what the payment received out of the receipts awaiting allocation: to revenue for
    the order (the surplus to the customer's balance), or all of it to the balance for a
    top-up. Called with the payment row locked."""
    received = received_usd(payment)
    balance = customer_account(payment.customer)
    revenue = system_account(LedgerAccountKind.REVENUE)
    unallocated = system_account(LedgerAccountKind.UNALLOCATED)
    lock_accounts([balance, revenue, unallocated])
    if payment.purpose == PaymentPurpose.TOP_UP:
        credit_received_to_balance(
            payment,
            amount=received,
            memo=f"Top-up {payment.reference}: {payment.asset} on {payment.network}",
            idempotency_key=f"top-up:{payment.pk}",
            actor=actor,
        )
        return
    order = payment.order
    due = min(order.total_usd, received)
    ledger_post(
        kind=TransactionKind.ORDER_PAYMENT,
        lines=[(unallocated, -due), (revenue, due)],
        memo=f"Order {order.reference} paid in {payment.asset} on {payment.network}",
        idempotency_key=f"order-payment:{order.pk}",
        actor=actor,
        order=order,
        payment=payment,
    )
    surplus = received - due
    if surplus > 0:
        ledger_post(
            kind=TransactionKind.OVERPAYMENT_CREDIT,
            lines=[(unallocated, -surplus), (balance, surplus)],
            memo=f"Surplus of payment {payment.reference} credited to the balance",
            idempotency_key=f"surplus:{payment.pk}",
            actor=actor,
            payment=payment,
        )
    rental_services.order_mark_paid(
        order_id=order.pk,
        actor=actor,
        reason=f"Paid in {payment.asset} on {payment.network} ({reason})",
    )


# --------------------------------------------------------------------- declarations


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
        # From a little before where the scan stands (or the head, before the first scan: a
        # new cursor starts at block 0, and reading a whole chain is not "look now").
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
        report.payments, report.stored = _store_many(network, current)
    report.confirmed, report.reorged = confirm_transfers(
        network_key=network.key, client=client, head=head
    )
    return report


__all__ = [
    "RpcError",
    "ScanReport",
    "allocate_to_purpose",
    "confirm_transfers",
    "payment_check",
    "scan_network",
]
