"""Settling: what the money on a payment means, decided in one place.

The only writer of payment statuses for chain events (through the setter's batch,
payments.crypto.services.status.PaymentStatusBatch). Called with the payments' row locks
held (payments.locks), inside the transaction that changed their transfers. For each payment:

1. Receipts. The units of newly confirmed transfers join the payment's `receipted_units`; the
   ledger gets the difference between the cumulative amount rounded down to the cent and what
   was posted before. Splitting a payment below the cent therefore never loses a cent, and a
   transfer confirmed twice (reorganised, included again) is counted once.
2. Allocation. What the payment received and did not yet allocate (`receipted_usd -
   allocated_usd`, sitting in "receipts awaiting allocation") goes where its state says:
   - open and fully paid in time: the order is paid (revenue; a surplus to the balance) or
     the top-up is credited; the order's other open payments close; an extension's money is
     credited to the balance and pays the extension from there (pay_extension);
   - the order moved on meanwhile (paid another way, cancelled), or the payment is closed,
     confirmed or resolved already: credited to the customer's balance, with an email;
   - expired, invalid, or partly paid at expiry: to the operators' review, untouched;
   - a confirmed transfer vanished: the payment goes to review as "reversed", the ledger
     keeps its receipt until an operator decides.
Everything is written in bulk: a batch of any size costs a fixed number of queries, plus one
order intent per order paid.
"""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal

from django.db import models
from django.db.models import Sum

from outbox.messages import enqueue
from rental import services as rental_services
from rental.models import Order

from ...bulk import any_pk, create_rows
from ...chain.networks import units_to_usd
from ...ledger.services.posting import Posting, customer_accounts, ledger_post_many, system_account
from ...locks import lock_accounts
from ...models import (
    LIVE_STATUSES,
    ChainTransfer,
    CryptoPayment,
    LedgerAccount,
    LedgerAccountKind,
    LedgerTransaction,
    PaymentEvent,
    PaymentEventKind,
    PaymentPurpose,
    PaymentStatus,
    ReviewReason,
    TransactionKind,
    TransferStatus,
)
from .status import PaymentStatusBatch, can_change

ZERO = Decimal("0.00")
MONEY_FIELDS = [
    "seen_units",
    "received_units",
    "receipted_units",
    "receipted_usd",
    "written_off_usd",
    "allocated_usd",
    "updated_at",
]
# What settle_seen changes on a payment besides its status (recount without `fresh`).
SEEN_FIELDS = ["seen_units", "received_units", "updated_at"]
# Where money that arrives on a payment in this state goes without anyone deciding.
CREDIT_ON_ARRIVAL = (PaymentStatus.CLOSED, PaymentStatus.CONFIRMED, PaymentStatus.RESOLVED)


@dataclass
class Book:
    """What one settlement will write: ledger postings, status changes, events, emails."""

    accounts: "Accounts | None"  # None: a book that moves no money (settle_seen)
    actor: object | None = None
    postings: list[Posting] = field(default_factory=list)
    statuses: PaymentStatusBatch = field(init=False)
    events: list[PaymentEvent] = field(default_factory=list)
    dirty: dict[int, CryptoPayment] = field(default_factory=dict)
    receipted: list[int] = field(default_factory=list)  # transfers now in the ledger
    # The payments' columns flush writes besides their status (settle_seen: SEEN_FIELDS).
    money_fields: list[str] = field(default_factory=lambda: MONEY_FIELDS)

    def __post_init__(self) -> None:
        self.statuses = PaymentStatusBatch(actor=self.actor)

    def status(self, payment: CryptoPayment, to_status: str, reason: str, **extra) -> None:
        """Check and apply now (later decisions of the batch see it); written at flush."""
        self.statuses.change(payment, to_status, reason, **extra)

    def review_reason(self, payment: CryptoPayment, review_reason: str) -> None:
        """A payment under review is now about something else; written at flush."""
        self.statuses.review_reason_change(payment, review_reason)

    def event(self, payment: CryptoPayment, kind: str, reason: str = "", **data) -> PaymentEvent:
        event = PaymentEvent(payment=payment, kind=kind, actor=self.actor, reason=reason, data=data)
        self.events.append(event)
        return event

    def post(self, payment, kind, lines, memo, key, order=None, extension=None) -> None:
        self.postings.append(
            Posting(
                kind,
                lines,
                memo,
                key,
                actor=self.actor,
                order=order,
                payment=payment,
                extension=extension,
            )
        )
        self.dirty[payment.pk] = payment

    def flush(self) -> None:
        """Write everything, in a fixed number of queries."""
        if self.receipted:
            ChainTransfer.objects.filter(pk__in=any_pk(self.receipted)).update(receipted=True)
        ledger_post_many(self.postings)
        # Then the money and status of every payment touched, in one statement, and the status
        # events: a status event describes money already posted.
        self.statuses.write(also=self.dirty.values(), also_fields=self.money_fields)
        if self.events:
            created = create_rows(self.events)
            _email_credits(created)
        self.postings, self.events, self.dirty = [], [], {}
        self.receipted = []


class Accounts:
    """The ledger accounts a settlement may touch, found (or created) once and locked once."""

    def __init__(self, payments: Iterable[CryptoPayment], customer_ids: Iterable[int] = ()):
        payments = list(payments)
        self.unallocated = system_account(LedgerAccountKind.UNALLOCATED)
        self.revenue = system_account(LedgerAccountKind.REVENUE)
        self.receipts = {
            (asset, network): system_account(
                LedgerAccountKind.CRYPTO_RECEIPTS, asset=asset, network=network
            )
            for asset, network in {(p.asset, p.network) for p in payments}
        }
        self.customers = customer_accounts({p.customer_id for p in payments} | set(customer_ids))

    def all(self) -> list[LedgerAccount]:
        return [
            self.unallocated,
            self.revenue,
            *self.receipts.values(),
            *self.customers.values(),
        ]

    def lock(self) -> None:
        lock_accounts(self.all())

    def receipts_of(self, payment: CryptoPayment) -> LedgerAccount:
        return self.receipts[(payment.asset, payment.network)]

    def balance_of(self, payment: CryptoPayment) -> LedgerAccount:
        return self.customers[payment.customer_id]


def open_book(payments: Iterable[CryptoPayment], *, actor=None, customer_ids=()) -> Book:
    """Find and lock (primary-key order) every account these payments' money may touch (and
    these customers' balances). Call it before any rental intent: ledger accounts come
    before the order (payments.locks)."""
    accounts = Accounts(payments, customer_ids)
    accounts.lock()
    return Book(accounts=accounts, actor=actor)


# ------------------------------------------------------------------------ counting


@dataclass(frozen=True, slots=True)
class Count:
    fresh: dict[int, list[ChainTransfer]]  # confirmed transfers not yet in the ledger
    late: set[int]  # payments with a confirmed transfer mined after their expiry
    receipts: dict[int, int]  # receipt postings each payment already has (keys stay unique)


def recount(payments: Iterable[CryptoPayment], *, fresh: bool = True) -> Count:
    """Refresh seen and confirmed units from the transfers (one grouped query) and find, per
    payment, its confirmed transfers not yet in the ledger (a second query, left out without
    `fresh`: the scan's seen transfers move no money)."""
    payments = {p.pk: p for p in payments}
    totals: dict[int, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    late = set()
    for payment_id, status, is_late, units in (
        ChainTransfer.objects.filter(payment_id__in=any_pk(payments))
        .values_list("payment_id", "status", "late")
        .annotate(units=Sum("amount_units"))
        .order_by()
    ):
        totals[payment_id][status] += units or 0
        if is_late and status == TransferStatus.CONFIRMED:
            late.add(payment_id)
    for payment_id, payment in payments.items():
        payment.seen_units = totals[payment_id].get(TransferStatus.SEEN, 0)
        payment.received_units = totals[payment_id].get(TransferStatus.CONFIRMED, 0)
    if not fresh:
        return Count(fresh={}, late=late, receipts={})
    found: dict[int, list[ChainTransfer]] = defaultdict(list)
    for transfer in ChainTransfer.objects.filter(
        payment_id__in=any_pk(payments), status=TransferStatus.CONFIRMED, receipted=False
    ).order_by("pk"):
        found[transfer.payment_id].append(transfer)
    receipts = {}
    if found:
        receipts = dict(
            LedgerTransaction.objects.filter(
                payment_id__in=any_pk(found), kind=TransactionKind.CRYPTO_RECEIPT
            )
            .values_list("payment_id")
            .annotate(n=models.Count("pk"))
            .order_by()
        )
    return Count(fresh=found, late=late, receipts=receipts)


def _post_receipts(
    book: Book, payment: CryptoPayment, transfers: list[ChainTransfer], *, posted: int = 0
) -> None:
    """Count newly confirmed transfers once, and post the cumulative amount's new cents.
    `posted`: the payment's receipt postings so far — the key's sequence number (the units
    alone repeat when a written-off transfer is included again)."""
    if not transfers:
        return
    payment.receipted_units += sum(t.amount_units for t in transfers)
    total = units_to_usd(payment.receipted_units, payment.decimals)
    delta = total - payment.receipted_usd
    payment.receipted_usd = total
    book.dirty[payment.pk] = payment
    if delta > 0:
        book.post(
            payment,
            TransactionKind.CRYPTO_RECEIPT,
            [(book.accounts.receipts_of(payment), -delta), (book.accounts.unallocated, delta)],
            f"{payment.asset} on {payment.network}: payment {payment.reference}, "
            + ", ".join(f"tx {t.tx_hash} log {t.log_index}" for t in transfers),
            f"receipt:{payment.pk}:{posted + 1}",
        )
    for transfer in transfers:
        book.event(
            payment,
            PaymentEventKind.CONFIRMED_TRANSFER,
            tx_hash=transfer.tx_hash,
            units=str(transfer.amount_units),
        )
    book.receipted += [t.pk for t in transfers]


# ---------------------------------------------------------------------- allocating


def unallocated_usd(payment: CryptoPayment) -> Decimal:
    return payment.unallocated_usd


def credit_to_balance(
    book: Book, payment: CryptoPayment, *, reason: str, expected: bool = False
) -> Decimal:
    """Move what the payment holds unallocated to the customer's balance; return the amount.
    Unless the credit is what the customer asked for (`expected`: a top-up), it is recorded in
    the payment's history and emailed: money the customer meant for an order."""
    amount = unallocated_usd(payment)
    if amount <= 0:
        return ZERO
    payment.allocated_usd += amount
    kind = (
        TransactionKind.TOP_UP
        if payment.purpose == PaymentPurpose.TOP_UP
        else TransactionKind.PAYMENT_CREDIT
    )
    book.post(
        payment,
        kind,
        [(book.accounts.unallocated, -amount), (book.accounts.balance_of(payment), amount)],
        f"Payment {payment.reference} credited to the balance: {reason}",
        f"credit:{payment.pk}:{payment.allocated_usd}",
    )
    if not expected:
        book.event(payment, PaymentEventKind.CREDITED, reason, amount=str(amount))
    return amount


def pay_order(book: Book, payment: CryptoPayment, order: Order, *, reason: str) -> bool:
    """Pay the order with what the payment received, if the order still takes it (rental
    decides); the surplus goes to the balance. False when the order had moved on."""
    if not rental_services.order_pay(order_id=order.pk, actor=book.actor, reason=reason):
        return False
    # The whole total when the payment is complete; what arrived when an operator accepts less.
    due = min(order.total_usd, unallocated_usd(payment))
    payment.allocated_usd += due
    book.post(
        payment,
        TransactionKind.ORDER_PAYMENT,
        [(book.accounts.unallocated, -due), (book.accounts.revenue, due)],
        f"Order {order.reference} paid in {payment.asset} on {payment.network}",
        f"order-payment:{order.pk}",
        order=order,
    )
    surplus = unallocated_usd(payment)
    if surplus > 0:
        payment.allocated_usd += surplus
        book.post(
            payment,
            TransactionKind.OVERPAYMENT_CREDIT,
            [(book.accounts.unallocated, -surplus), (book.accounts.balance_of(payment), surplus)],
            f"Surplus of payment {payment.reference} credited to the balance",
            f"surplus:{payment.pk}",
        )
        book.event(payment, PaymentEventKind.CREDITED, "surplus", amount=str(surplus))
    return True


def pay_extension(book: Book, payment: CryptoPayment, *, reason: str) -> bool:
    """An extension payment's money goes to the customer's balance (it was sent for that),
    then, in the same batch, pays the extension from there if rental still takes it (the
    ledger checks the balance over the whole batch). False when the extension or its order
    had moved on (paid from the balance, cancelled, the rental ended): the money stays on
    the balance, recorded in the payment's history and emailed — never stranded."""
    from rental.models import OrderExtension

    extension = OrderExtension.objects.select_related("order").get(pk=payment.extension_id)
    arrived = unallocated_usd(payment)
    if arrived < extension.total_usd:
        why = f"less than extension {extension.reference} costs arrived"
    elif not rental_services.extension_pay(
        extension_id=extension.pk, actor=book.actor, reason=reason
    ):
        why = f"extension {extension.reference} no longer awaited it"
    else:
        why = ""
    if why:
        credit_to_balance(book, payment, reason=why)
        return False
    credit_to_balance(book, payment, reason=f"for extension {extension.reference}", expected=True)
    balance = book.accounts.balance_of(payment)
    book.post(
        payment,
        TransactionKind.EXTENSION_PAYMENT,
        [(balance, -extension.total_usd), (book.accounts.revenue, extension.total_usd)],
        f"Extension {extension.reference} of order {extension.order.reference} paid in "
        f"{payment.asset} on {payment.network}",
        f"extension-payment:{extension.pk}",
        order=extension.order,
        extension=extension,
    )
    surplus = arrived - extension.total_usd
    if surplus > 0:
        book.event(payment, PaymentEventKind.CREDITED, "surplus", amount=str(surplus))
    return True


def close(book: Book, payment: CryptoPayment, *, reason: str) -> None:
    """The payment's order no longer needs it: close it; money on it goes to the balance
    (now, and whatever arrives later)."""
    if payment.status in LIVE_STATUSES:
        book.status(payment, PaymentStatus.CLOSED, reason)
    credit_to_balance(book, payment, reason=reason)


def close_siblings(book: Book, payment: CryptoPayment, payments: dict[int, CryptoPayment]):
    """Close the other live payments of this payment's order (locked by the caller)."""
    for other in payments.values():
        same_order = other.pk != payment.pk and other.order_id == payment.order_id
        if same_order and other.status in LIVE_STATUSES:
            close(book, other, reason=f"order settled by payment {payment.reference}")


# ------------------------------------------------------------------------ deciding


def _to_review(book: Book, payment: CryptoPayment, reason: str, why: str) -> None:
    if payment.status == PaymentStatus.NEEDS_REVIEW:
        if reason == ReviewReason.REVERSED and payment.review_reason != reason:
            # Already in front of an operator: now about the reversal (the transfer's own
            # history row says so); written with the batch at flush.
            book.review_reason(payment, reason)
        return
    book.status(payment, PaymentStatus.NEEDS_REVIEW, why, review_reason=reason)
    if payment.order_id:
        rental_services.order_send_to_review(
            order_id=payment.order_id, reason=f"Payment {payment.reference}: {why}"
        )


def _decide(
    book: Book,
    payment: CryptoPayment,
    *,
    arrived: bool,
    late: bool,
    reversed_now: bool,
    orders: dict[int, Order],
    payments: dict[int, CryptoPayment],
) -> None:
    status = payment.status
    if reversed_now:
        _to_review(book, payment, ReviewReason.REVERSED, "a confirmed transfer was reversed")
        return
    if status in LIVE_STATUSES:
        if payment.received_units >= payment.amount_due_units:
            if late:
                _to_review(book, payment, ReviewReason.PAID_LATE, "paid after the expiry")
            elif payment.purpose == PaymentPurpose.TOP_UP:
                credit_to_balance(book, payment, reason="top-up confirmed on chain", expected=True)
                book.status(payment, PaymentStatus.CONFIRMED, "confirmed on chain")
            elif payment.purpose == PaymentPurpose.EXTENSION:
                if pay_extension(
                    book,
                    payment,
                    reason=f"Paid in {payment.asset} on {payment.network} (confirmed on chain)",
                ):
                    book.status(payment, PaymentStatus.CONFIRMED, "confirmed on chain")
                else:
                    close(book, payment, reason="the extension was no longer awaiting this payment")
            elif pay_order(
                book,
                payment,
                orders[payment.order_id],
                reason=f"Paid in {payment.asset} on {payment.network} (confirmed on chain)",
            ):
                book.status(payment, PaymentStatus.CONFIRMED, "confirmed on chain")
                close_siblings(book, payment, payments)
            else:
                close(book, payment, reason="the order was no longer awaiting this payment")
        elif status == PaymentStatus.AWAITING and (payment.seen_units or payment.received_units):
            book.status(payment, PaymentStatus.DETECTED, "transfer seen on chain")
        elif status == PaymentStatus.DETECTED and not (
            payment.seen_units or payment.received_units
        ):
            book.status(payment, PaymentStatus.AWAITING, "the transfer seen was reorganised away")
        return
    if not arrived:
        return
    if status in CREDIT_ON_ARRIVAL:
        credit_to_balance(book, payment, reason=f"received on a {status} payment")
    elif status == PaymentStatus.EXPIRED:
        _to_review(book, payment, ReviewReason.PAID_LATE, "money arrived after the expiry")
    elif status == PaymentStatus.INVALID and can_change(status, PaymentStatus.NEEDS_REVIEW):
        _to_review(book, payment, ReviewReason.UNMATCHED, "money arrived on an invalid payment")
    # NEEDS_REVIEW: the money waits, unallocated, in front of the operator.


def settle(
    payments: dict[int, CryptoPayment],
    *,
    touched: Iterable[int],
    reversed_ids: Iterable[int] = (),
    actor=None,
) -> None:
    """Settle the `touched` payments after their transfers changed. `payments` holds them
    and their orders' live siblings, all locked (payments.locks.lock_payments_with_siblings)."""
    touched = [payments[pk] for pk in sorted(set(touched)) if pk in payments]
    if not touched:
        return
    reversed_ids = set(reversed_ids)
    book = open_book(payments.values(), actor=actor)
    count = recount(touched)
    order_ids = {p.order_id for p in touched if p.order_id}
    orders = {o.pk: o for o in Order.objects.filter(pk__in=order_ids)} if order_ids else {}
    for payment in touched:
        book.dirty[payment.pk] = payment
        fresh = count.fresh.get(payment.pk, [])
        _post_receipts(book, payment, fresh, posted=count.receipts.get(payment.pk, 0))
        _decide(
            book,
            payment,
            arrived=bool(fresh),
            late=payment.pk in count.late,
            reversed_now=payment.pk in reversed_ids,
            orders=orders,
            payments=payments,
        )
    book.flush()


def settle_seen(payments: dict[int, CryptoPayment], *, touched: Iterable[int]) -> None:
    """Transfers were seen (or moved to another block) on these locked payments: recount them
    and step between waiting and seen. No money moves before a confirmation, so no ledger
    account is looked up or locked (the scan's hot path)."""
    touched = [payments[pk] for pk in sorted(set(touched)) if pk in payments]
    if not touched:
        return
    book = Book(accounts=None, money_fields=SEEN_FIELDS)  # no other column changes here
    recount(touched, fresh=False)
    for payment in touched:
        book.dirty[payment.pk] = payment
        arrived = payment.seen_units or payment.received_units
        if payment.status == PaymentStatus.AWAITING and arrived:
            book.status(payment, PaymentStatus.DETECTED, "transfer seen on chain")
        elif payment.status == PaymentStatus.DETECTED and not arrived:
            book.status(payment, PaymentStatus.AWAITING, "the transfer seen was reorganised away")
    book.flush()


def _email_credits(events: list[PaymentEvent]) -> None:

    credited = [event.pk for event in events if event.kind == PaymentEventKind.CREDITED]
    if credited:
        enqueue("payments.tasks.payment_event_emails", credited)
