"""Helpers of the payments state machine test (test_payment_state_machine_stateful.py).

- `RawTransfer` / `sign_transfer` / `send_raw`: token transfers from the payer signed here, so
  that a transaction dropped by a reorganisation can be sent again as is (same hash, another
  block) — the "included again" case of a reorganisation.
- `fingerprint`: a digest per table of what the database holds of payments, transfers,
  ledger and orders, to show that a refused request changed nothing.
- `money_violations`: the invariants, by name, each a list of what is wrong.
"""

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

from django.db import connection
from django.db.models import Count, Q, Sum
from django.db.models.functions import Coalesce

from payments.chain.local import PAYER_KEY, token_contract
from payments.chain.networks import units_to_usd
from payments.models import (
    LIVE_STATUSES,
    ChainCursor,
    ChainTransfer,
    CryptoPayment,
    LedgerAccount,
    LedgerAccountKind,
    LedgerEntry,
    LedgerTransaction,
    PaymentEvent,
    PaymentEventKind,
    PaymentStatus,
    TransactionKind,
    TransferStatus,
)
from rental.models import Order, OrderStatus, OrderStatusChange

ZERO = Decimal("0.00")
PAID_STATUSES = (OrderStatus.PAID, OrderStatus.PROVISIONING, OrderStatus.ACTIVE)
# Statuses an order with an order-payment transaction may be in (the money bought it).
DELIVERED_STATUSES = (*PAID_STATUSES, OrderStatus.ENDED)


# ------------------------------------------------------------------------------- the chain


@dataclass(frozen=True, slots=True)
class RawTransfer:
    raw: str  # the signed transaction, 0x hex
    tx_hash: str  # lower-case 0x hex
    to: str
    units: int


def sign_transfer(chain, to: str, units: int) -> RawTransfer:
    """A token transfer from the payer (who starts with 10**15 units), signed with the next
    nonce; not sent."""
    w3 = chain.w3
    payer = w3.eth.account.from_key(PAYER_KEY)
    call = token_contract(w3, chain.token_address).functions.transfer(
        w3.to_checksum_address(to), int(units)
    )
    tx = {
        "to": chain.token_address,
        "data": call._encode_transaction_data(),
        "value": 0,
        "nonce": w3.eth.get_transaction_count(payer.address, "pending"),
        "chainId": chain.chain_id,
        "gas": 100_000,
        "maxFeePerGas": 10**10,
        "maxPriorityFeePerGas": 10**9,
        "type": 2,
    }
    signed = payer.sign_transaction(tx)
    raw = "0x" + signed.raw_transaction.hex().removeprefix("0x")
    tx_hash = "0x" + signed.hash.hex().removeprefix("0x")
    return RawTransfer(raw=raw, tx_hash=tx_hash.lower(), to=to, units=int(units))


def send_raw(chain, transfer: RawTransfer) -> None:
    """Send a signed transfer and wait for it (anvil mines it in a block of its own)."""
    tx_hash = chain.w3.eth.send_raw_transaction(transfer.raw)
    receipt = chain.w3.eth.wait_for_transaction_receipt(tx_hash, timeout=30)
    if receipt["status"] != 1:
        raise AssertionError(f"the test transfer {transfer.tx_hash} failed on chain")


# ---------------------------------------------------------------------------- the database

# What a refused request must leave as it was: per table, the columns compared.
FINGERPRINTED = {
    "payments": (
        CryptoPayment,
        [
            "status",
            "review_reason",
            "received_units",
            "seen_units",
            "receipted_units",
            "receipted_usd",
            "written_off_usd",
            "allocated_usd",
            "declared_at",
            "declared_tx_hash",
            "expires_at",
            "confirmed_at",
        ],
    ),
    "transfers": (ChainTransfer, ["status", "receipted", "block_hash", "late", "payment"]),
    "ledger accounts": (LedgerAccount, ["balance"]),
    "ledger transactions": (LedgerTransaction, ["kind", "idempotency_key"]),
    "ledger entries": (LedgerEntry, ["transaction", "account", "amount"]),
    "payment events": (PaymentEvent, ["kind", "from_status", "to_status"]),
    "orders": (Order, ["status", "hold_until"]),
    "order status changes": (OrderStatusChange, ["to_status"]),
    "chain cursors": (ChainCursor, ["next_block", "last_block_hash"]),
}


def _fingerprint_sql() -> str:
    quote = connection.ops.quote_name
    parts = []
    for label, (model, fields) in FINGERPRINTED.items():
        meta = model._meta
        columns = ", ".join(quote(meta.get_field(f).column) for f in fields)
        pk = quote(meta.pk.column)
        parts.append(
            f"(SELECT md5(coalesce(string_agg(row({pk}, {columns})::text, ',' ORDER BY {pk}),"
            f" '')) FROM {quote(meta.db_table)}) AS {quote(label)}"
        )
    return "SELECT " + ", ".join(parts)


def fingerprint() -> dict[str, str]:
    """A digest per table of what a refused request must leave as it was (one query)."""
    with connection.cursor() as cursor:
        cursor.execute(_fingerprint_sql())
        return dict(zip(FINGERPRINTED, cursor.fetchone(), strict=True))


def fingerprint_diff(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The tables that changed."""
    return [label for label in before if before[label] != after[label]]


# ----------------------------------------------------------------------------- invariants


def money_violations(*, asset: str, network: str) -> dict[str, list[str]]:
    """Every invariant of the money, by name: what is wrong (empty lists when all holds).

    - the ledger balances: the sum of all entries is zero, each transaction has two entries
      or more summing to zero (what the database checks at commit, which a test never
      reaches), each cached balance is the sum of its account's entries, no customer balance
      is negative;
    - every confirmed unit is in the ledger once: per payment, the units counted in the ledger
      are those of its `receipted` transfers — confirmed, reversed (not written off), or seen
      again in another block after a reorganisation that included the transaction again and
      waiting for their confirmations there; a confirmed transfer is always counted, one
      reorganised away is counted only under review; `receipted_usd` is their value rounded
      down once; the payment's postings on the receipts account equal it; in all, the
      receipts account holds minus the sum of the payments' `receipted_usd`;
    - no order is paid twice: at most one order-payment transaction per order, exactly one
      for an order paid, provisioning or active, and none for an order that was not delivered
      (cancelled, awaiting payment, under review);
    - no money sits unallocated without a review: a payment holding unallocated money is open
      (awaiting, detected) or under review, and the receipts awaiting allocation hold the sum
      of what the payments hold unallocated;
    - every status change is recorded: each payment's status events chain from "awaiting" to
      its current status.
    """
    payments = {p.pk: p for p in CryptoPayment.objects.order_by("pk")}
    return {
        "the ledger balances": _ledger(),
        "every confirmed unit is in the ledger once": _receipts(payments, asset, network),
        "no order is paid twice": _orders(),
        "no money sits unallocated without a review": _allocation(payments),
        "every status change is recorded": _history(payments),
    }


def _ledger() -> list[str]:
    wrong = []
    total = ZERO
    for account in LedgerAccount.objects.annotate(
        entries_sum=Coalesce(Sum("entries__amount"), ZERO)
    ).order_by("pk"):
        total += account.entries_sum
        if account.balance != account.entries_sum:
            wrong.append(
                f"{account}: cached balance {account.balance}, entries sum {account.entries_sum}"
            )
        if account.kind == LedgerAccountKind.CUSTOMER_BALANCE and account.balance < 0:
            wrong.append(f"{account}: negative customer balance {account.balance}")
    if total != 0:
        wrong.append(f"the sum of all ledger entries is {total}, not 0")
    for txn_id, kind, entries, amount in (
        LedgerTransaction.objects.annotate(
            n=Count("entries"), total=Coalesce(Sum("entries__amount"), ZERO)
        )
        .filter(Q(n__lt=2) | ~Q(total=0))
        .order_by("pk")
        .values_list("pk", "kind", "n", "total")
    ):
        wrong.append(f"ledger transaction {txn_id} ({kind}): {entries} entries summing to {amount}")
    return wrong


def _receipts(payments: dict[int, CryptoPayment], asset: str, network: str) -> list[str]:
    wrong = []
    units = defaultdict(int)
    for payment_id, status, receipted, amount, tx_hash in (
        ChainTransfer.objects.filter(payment__isnull=False)
        .order_by("pk")
        .values_list("payment_id", "status", "receipted", "amount_units", "tx_hash")
    ):
        payment = payments[payment_id]
        if receipted:
            units[payment_id] += int(amount)
            if status == TransferStatus.REORGED and payment.status != PaymentStatus.NEEDS_REVIEW:
                wrong.append(
                    f"payment {payment_id} ({payment.status}): transfer {tx_hash} ({amount} "
                    "units) is in the ledger but was reorganised off the chain, and nobody "
                    "reviews it"
                )
        elif status == TransferStatus.CONFIRMED:
            wrong.append(
                f"payment {payment_id}: confirmed transfer {tx_hash} ({amount} units) is not "
                "in the ledger"
            )
    receipts = LedgerAccount.objects.filter(
        kind=LedgerAccountKind.CRYPTO_RECEIPTS, customer=None, asset=asset, network=network
    ).first()
    posted = {}
    if receipts is not None:
        posted = dict(
            LedgerEntry.objects.filter(account=receipts, transaction__payment__isnull=False)
            .values("transaction__payment_id")
            .annotate(amount=Sum("amount"))
            .values_list("transaction__payment_id", "amount")
            .order_by()
        )
    total_receipted = ZERO
    for payment in payments.values():
        total_receipted += payment.receipted_usd
        counted = units.get(payment.pk, 0)
        if int(payment.receipted_units) != counted:
            wrong.append(
                f"payment {payment.pk}: receipted_units {payment.receipted_units}, its "
                f"receipted transfers hold {counted}"
            )
        value = units_to_usd(counted, payment.decimals)
        if payment.receipted_usd != value:
            wrong.append(
                f"payment {payment.pk}: receipted_usd {payment.receipted_usd}, its receipted "
                f"transfers are worth {value}"
            )
        on_account = -posted.get(payment.pk, ZERO)
        if on_account != payment.receipted_usd:
            wrong.append(
                f"payment {payment.pk}: its postings on the receipts account hold "
                f"{on_account}, receipted_usd is {payment.receipted_usd}"
            )
    balance = receipts.balance if receipts else ZERO
    if balance != -total_receipted:
        wrong.append(
            f"the receipts account holds {balance}, the payments' receipted_usd sum to "
            f"{total_receipted}"
        )
    return wrong


def _orders() -> list[str]:
    wrong = []
    paid = dict(
        LedgerTransaction.objects.filter(kind=TransactionKind.ORDER_PAYMENT)
        .values("order_id")
        .annotate(n=Count("pk"))
        .values_list("order_id", "n")
        .order_by()
    )
    for order_id, status in Order.objects.order_by("pk").values_list("pk", "status"):
        count = paid.get(order_id, 0)
        if count > 1:
            wrong.append(f"order {order_id} ({status}) has {count} order-payment transactions")
        if status in PAID_STATUSES and count != 1:
            wrong.append(f"order {order_id} is {status} with {count} order-payment transactions")
        if count and status not in DELIVERED_STATUSES:
            wrong.append(f"order {order_id} is {status} but was paid ({count} transaction)")
    return wrong


def _allocation(payments: dict[int, CryptoPayment]) -> list[str]:
    wrong = []
    total = ZERO
    for payment in payments.values():
        unallocated = payment.unallocated_usd
        total += unallocated
        if unallocated < 0:
            wrong.append(f"payment {payment.pk}: negative unallocated {unallocated}")
        if unallocated > 0 and payment.status not in (*LIVE_STATUSES, PaymentStatus.NEEDS_REVIEW):
            wrong.append(
                f"payment {payment.pk} is {payment.status} and holds {unallocated} USD "
                "unallocated, in front of nobody"
            )
    account = LedgerAccount.objects.filter(
        kind=LedgerAccountKind.UNALLOCATED, customer=None
    ).first()
    balance = account.balance if account else ZERO
    if balance != total:
        wrong.append(
            f"the unallocated account holds {balance}, the payments' unallocated sum to {total}"
        )
    return wrong


def _history(payments: dict[int, CryptoPayment]) -> list[str]:
    wrong = []
    events = defaultdict(list)
    for payment_id, from_status, to_status in (
        PaymentEvent.objects.filter(kind=PaymentEventKind.STATUS)
        .order_by("pk")
        .values_list("payment_id", "from_status", "to_status")
    ):
        events[payment_id].append((from_status, to_status))
    for payment in payments.values():
        current = PaymentStatus.AWAITING
        for from_status, to_status in events.get(payment.pk, []):
            if from_status != current:
                wrong.append(
                    f"payment {payment.pk}: a status event from {from_status!r} follows "
                    f"{current!r} ({events[payment.pk]})"
                )
            current = to_status
        if current != payment.status:
            wrong.append(
                f"payment {payment.pk} is {payment.status!r}, its history ends at {current!r} "
                f"({events.get(payment.pk, [])})"
            )
    return wrong
