"""Confirming: a seen transfer counts once it has N confirmations and its block is still the one
we stored; a changed block before that drops it (reorganised), a vanished block after it marks
it reversed. Each change is settled in the same transaction (by the crypto room's settling,
registered in payments.chain.settlement), in batches: a fixed number of queries per batch,
whatever its size.
"""

from collections.abc import Iterable

from django.db import transaction

from ..bulk import any_pk, create_rows
from ..locks import lock_payments_with_siblings, lock_transfers
from ..models import ChainTransfer, PaymentEvent, PaymentEventKind, TransferStatus
from .networks import confirmations_at, get_network
from .rpc import ChainClient
from .settlement import settle
from .transfer_status import transfers_set_status

BATCH = 500  # transfers settled per transaction


def confirm_transfers(
    *,
    network_key: str,
    client: ChainClient | None = None,
    head: int | None = None,
    known_hashes: dict[int, str] | None = None,
) -> tuple[int, int]:
    """Confirm the network's seen transfers that have N confirmations and an unchanged block
    hash; drop those whose block hash changed. Returns (confirmed, reorged).

    `known_hashes`: block hashes the caller read from the chain just now (a scan's logs, checked
    against its last block after the read); the other blocks are fetched here."""
    network = get_network(network_key)
    client = client or ChainClient(network)
    head = head if head is not None else client.head()
    pending = list(
        ChainTransfer.objects.filter(network=network_key, status=TransferStatus.SEEN).values_list(
            "pk", "block_number", "block_hash"
        )
    )
    numbers = {number for _, number, _ in pending if number <= head}
    known = known_hashes or {}
    hashes = {number: known[number] for number in numbers if number in known}
    unknown = numbers - hashes.keys()
    if unknown:
        hashes |= {number: info[0] for number, info in client.blocks(unknown).items()}
    decided: dict[int, tuple[str, str]] = {}  # transfer id -> (new status, stored hash)
    for transfer_id, number, stored_hash in pending:
        current = hashes.get(number)
        if current is None:
            continue
        if current != stored_hash:
            decided[transfer_id] = (TransferStatus.REORGED, stored_hash)
        elif confirmations_at(head=head, block_number=number) >= network.confirmations:
            decided[transfer_id] = (TransferStatus.CONFIRMED, stored_hash)
    confirmed = reorged = 0
    ids = sorted(decided)
    for start in range(0, len(ids), BATCH):
        c, r = _apply({pk: decided[pk] for pk in ids[start : start + BATCH]})
        confirmed, reorged = confirmed + c, reorged + r
    return confirmed, reorged


def _apply(decided: dict[int, tuple[str, str]]) -> tuple[int, int]:
    """Lock the payments and transfers, re-check each transfer, change it, settle."""
    payment_ids = set(
        ChainTransfer.objects.filter(pk__in=any_pk(decided), payment__isnull=False).values_list(
            "payment_id", flat=True
        )
    )
    with transaction.atomic():
        payments = lock_payments_with_siblings(payment_ids)
        transfers = lock_transfers(decided)
        changes, events = [], []
        for transfer_id, (status, stored_hash) in decided.items():
            transfer = transfers.get(transfer_id)
            if transfer is None or transfer.status != TransferStatus.SEEN:
                continue
            if transfer.block_hash != stored_hash:
                continue  # moved meanwhile (seen again in another block)
            if status == TransferStatus.REORGED and transfer.payment_id:
                events.append(
                    PaymentEvent(
                        payment_id=transfer.payment_id,
                        kind=PaymentEventKind.REORGED,
                        data={"tx_hash": transfer.tx_hash, "block": transfer.block_number},
                    )
                )
            changes.append((transfer, status))
        transfers_set_status(changes)
        create_rows(events)
        settle(payments, touched={t.payment_id for t, _ in changes if t.payment_id})
    confirmed = sum(1 for _, status in changes if status == TransferStatus.CONFIRMED)
    return confirmed, len(changes) - confirmed


def transfers_reversed(*, transfer_ids: Iterable[int]) -> int:
    """Confirmed transfers whose block is gone from the chain (a reorganisation deeper than
    the confirmations): mark them reversed and send their payments to review. The ledger keeps
    their receipts until an operator decides. Returns how many changed."""
    ids = sorted(set(transfer_ids))
    if not ids:
        return 0
    payment_ids = set(
        ChainTransfer.objects.filter(pk__in=ids, payment__isnull=False).values_list(
            "payment_id", flat=True
        )
    )
    with transaction.atomic():
        payments = lock_payments_with_siblings(payment_ids)
        transfers = [
            t for t in lock_transfers(ids).values() if t.status == TransferStatus.CONFIRMED
        ]
        transfers_set_status([(t, TransferStatus.REVERSED) for t in transfers])
        create_rows(
            [
                PaymentEvent(
                    payment_id=t.payment_id,
                    kind=PaymentEventKind.REVERSED_TRANSFER,
                    data={
                        "tx_hash": t.tx_hash,
                        "block": t.block_number,
                        "units": str(t.amount_units),
                    },
                )
                for t in transfers
                if t.payment_id
            ]
        )
        touched = {t.payment_id for t in transfers if t.payment_id}
        settle(payments, touched=touched, reversed_ids=touched)
    return len(transfers)
