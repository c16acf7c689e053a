"""Every row lock of the payments app, in one place.

The lock order, written once: a transaction takes what it needs in this order, never the
reverse, and several rows of one kind in primary-key order — so two transactions never wait on
each other in a circle.

    0. an order's payment mutex (a transaction-scoped advisory lock per order), taken first by
       the services that open, pay or cancel for one order: they run one at a time per order,
       so the payments they lock are all the order's payments while they hold the order
    1. the network's chain cursor (a scan's own short transaction)
    2. crypto payments, by primary key
    3. chain transfers, by primary key
    3a. withdrawals, by primary key (a withdrawal's services lock it, then the ledger
       accounts its postings move; the on-chain check reads the chain before taking it)
    4. ledger accounts, by primary key
    5. rental's rows (the order, then its extension or its GPU model), taken by rental's
       intent services
    6. the deposit-address counter (only opening a payment takes it, after the order)
    7. the receipt counter (last of all: payments.ledger.services.receipts takes it once per ledger
       batch that issues a receipt, after that batch's accounts, and holds it to the commit;
       a transaction that posts again after a receipt locks no account it does not already
       hold, as settlement's book locks all of its accounts when it opens)
    (A payment event or a withdrawal event is locked alone, in the email task's own
    transaction.)

Every lock is `SELECT ... FOR NO KEY UPDATE OF <this table>`, as in rental.locks (which says
why): joined rows are read, not locked.
"""

from collections.abc import Iterable

from django.db import connection
from django.db.models import QuerySet

from accounts.locks import advisory_key

from .bulk import any_pk
from .models import (
    LIVE_STATUSES,
    AddressIndexCounter,
    ChainCursor,
    ChainTransfer,
    CryptoPayment,
    LedgerAccount,
    PaymentEvent,
    ReceiptCounter,
    Withdrawal,
    WithdrawalEvent,
)


def _for_update(queryset: QuerySet, **options) -> QuerySet:
    return queryset.select_for_update(of=("self",), no_key=True, **options).order_by("pk")


def lock_payments(payment_ids: Iterable[int]) -> dict[int, CryptoPayment]:
    """These payments, locked in primary-key order."""
    ids = sorted(set(payment_ids))
    if not ids:
        return {}
    return {p.pk: p for p in _for_update(CryptoPayment.objects.filter(pk__in=any_pk(ids)))}


def lock_payments_with_siblings(payment_ids: Iterable[int]) -> dict[int, CryptoPayment]:
    """These payments and the live payments of their orders, all locked in one primary-key
    ordered pass (settling one payment may close its order's others)."""
    ids = set(payment_ids)
    if not ids:
        return {}
    orders = CryptoPayment.objects.filter(pk__in=any_pk(ids), order__isnull=False).values(
        "order_id"
    )
    siblings = CryptoPayment.objects.filter(order_id__in=orders, status__in=LIVE_STATUSES)
    return lock_payments(ids | set(siblings.values_list("pk", flat=True)))


def lock_customer_payment(*, payment_id: int, customer) -> CryptoPayment:
    """The customer's own payment, locked; another customer's raises DoesNotExist."""
    payment = _for_update(CryptoPayment.objects.filter(pk=payment_id, customer=customer)).first()
    if payment is None:
        raise CryptoPayment.DoesNotExist()
    return payment


def order_mutex_key(order_id: int) -> int:
    """The advisory-lock key of an order's payment mutex (apart from pilot.locks')."""
    return advisory_key("payments.order", order_id)


def lock_order_for_payment_changes(*, order_id: int) -> None:
    """Step 0: wait until no other transaction opens, pays or cancels for this order.

    Without it, a payment opened while another request waited on the order's row was not among
    the payments that request had locked: it had to lock them after the order (the reverse
    order: 8 parallel "pay with tUSDC" clicks deadlocked), or missed them (a balance payment
    left the new crypto payment open). SQLite runs one writer at a time: nothing to take.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [order_mutex_key(order_id)])


def lock_order_payments(*, order_id: int, statuses=LIVE_STATUSES) -> list[CryptoPayment]:
    """The order's payments in these statuses (by default the live ones), locked."""
    return list(_for_update(CryptoPayment.objects.filter(order_id=order_id, status__in=statuses)))


def lock_extension_payments(*, extension_id: int, statuses=LIVE_STATUSES) -> list[CryptoPayment]:
    """The extension's payments in these statuses (by default the live ones), locked; taken
    under its order's payment mutex (step 0), like an order's."""
    return list(
        _for_update(CryptoPayment.objects.filter(extension_id=extension_id, status__in=statuses))
    )


def lock_transfers(transfer_ids: Iterable[int]) -> dict[int, ChainTransfer]:
    ids = sorted(set(transfer_ids))
    if not ids:
        return {}
    return {t.pk: t for t in _for_update(ChainTransfer.objects.filter(pk__in=any_pk(ids)))}


def lock_withdrawal(*, withdrawal_id: int, customer=None) -> Withdrawal:
    """One withdrawal, locked (step 3a); with `customer`, only theirs. Raises
    Withdrawal.DoesNotExist."""
    rows = Withdrawal.objects.filter(pk=withdrawal_id)
    if customer is not None:
        rows = rows.filter(customer=customer)
    withdrawal = _for_update(rows).first()
    if withdrawal is None:
        raise Withdrawal.DoesNotExist()
    return withdrawal


def lock_accounts(accounts: Iterable[LedgerAccount]) -> dict[int, LedgerAccount]:
    """Ledger accounts, locked in primary-key order (no deadlock between opposite postings)."""
    ids = sorted({account.pk for account in accounts})
    return {a.pk: a for a in _for_update(LedgerAccount.objects.filter(pk__in=ids))}


def lock_payment_event(event_id: int) -> PaymentEvent | None:
    """One history row, while its email is sent (taken alone, in a transaction of its own)."""
    return (
        PaymentEvent.objects.select_for_update(of=("self",), no_key=True)
        .select_related("payment__customer", "payment__order")
        .filter(pk=event_id)
        .first()
    )


def lock_withdrawal_event(event_id: int) -> WithdrawalEvent | None:
    """One withdrawal history row, while its email is sent (taken alone, in a transaction of
    its own)."""
    return (
        WithdrawalEvent.objects.select_for_update(of=("self",), no_key=True)
        .select_related("withdrawal__customer")
        .filter(pk=event_id)
        .first()
    )


def lock_address_counter() -> AddressIndexCounter:
    AddressIndexCounter.objects.get_or_create(pk=1)
    return AddressIndexCounter.objects.select_for_update(no_key=True).get(pk=1)


def lock_receipt_counter() -> ReceiptCounter:
    """Step 7: the one receipt counter row (pk=1, created by migration), locked until the
    commit, so that receipt numbers follow each other without gaps. The row is created again
    where it is missing (a test database emptied after its migrations)."""
    counter = _for_update(ReceiptCounter.objects.filter(pk=1)).first()
    if counter is None:
        ReceiptCounter.objects.get_or_create(pk=1)
        counter = _for_update(ReceiptCounter.objects.filter(pk=1)).get()
    return counter


def lock_cursor(network_key: str, *, skip_locked: bool = False) -> ChainCursor | None:
    """The network's cursor, or None when another scan holds it and `skip_locked`."""
    return (
        ChainCursor.objects.select_for_update(skip_locked=skip_locked, no_key=True)
        .filter(network=network_key)
        .first()
    )
