"""Operators resolve what the watcher cannot: payments under review.

Every action needs a reason, records the acting user in the payment's history, and moves money
only through the ledger, out of the receipts awaiting allocation. Each takes the payment's lock
(with its order's other live payments), then the ledger accounts, then calls rental's intents.
"""

from decimal import Decimal

from django.db import transaction
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from rental import services as rental_services
from rental.models import Order

from ...chain.networks import units_to_usd
from ...exceptions import PaymentError
from ...ledger.services.posting import system_account
from ...locks import lock_payments_with_siblings, lock_transfers
from ...models import (
    ChainTransfer,
    CryptoPayment,
    LedgerAccountKind,
    LedgerTransaction,
    PaymentEventKind,
    PaymentPurpose,
    PaymentStatus,
    ReviewReason,
    TransactionKind,
    TransferStatus,
)
from .settling import (
    Book,
    close_siblings,
    credit_to_balance,
    open_book,
    pay_extension,
    pay_order,
    unallocated_usd,
)


class NotInReview(PaymentError):
    message = _("Only a payment under review can be resolved this way.")


class ReasonRequired(PaymentError):
    message = _("Give a reason: it is kept in the payment's history.")


class OrderNoLongerPayable(PaymentError):
    message = _(
        "The order was cancelled or paid another way: credit the money to the customer's "
        "balance instead."
    )


class NothingReceived(PaymentError):
    message = _("Nothing confirmed and unallocated was received on this payment.")


class ExtensionNoLongerPayable(PaymentError):
    message = _(
        "This payment cannot settle its extension: less than the extension costs arrived, or "
        "the extension is no longer awaiting payment (paid another way, cancelled, the rental "
        "ended). Credit what arrived to the customer's balance instead."
    )


class NotReversed(PaymentError):
    message = _("No transfer of this payment was reversed after its confirmation.")


def _reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ReasonRequired()
    return reason[:500]


def _open_review(payment_id: int, actor: User) -> tuple[CryptoPayment, dict, Book]:
    """Lock the payment under review (with its order's live payments) and its accounts."""
    payments = lock_payments_with_siblings([payment_id])
    payment = payments.get(payment_id)
    if payment is None:
        raise CryptoPayment.DoesNotExist()
    if payment.status != PaymentStatus.NEEDS_REVIEW:
        raise NotInReview()
    return payment, payments, open_book(payments.values(), actor=actor)


def payment_mark_settled(*, payment_id: int, actor: User, reason: str) -> CryptoPayment:
    """Accept what was received as the payment: the order is paid (revenue gets what arrived,
    at most the order total; a surplus goes to the balance), a top-up is credited, an
    extension's money is credited and pays the extension (pay_extension); when it cannot
    (less than its price, no longer awaited) ExtensionNoLongerPayable and nothing changes."""
    reason = _reason(reason)
    with transaction.atomic():
        payment, payments, book = _open_review(payment_id, actor)
        if unallocated_usd(payment) <= 0:
            raise NothingReceived()
        if payment.purpose == PaymentPurpose.TOP_UP:
            credit_to_balance(book, payment, reason=f"settled by an operator: {reason}")
        elif payment.purpose == PaymentPurpose.EXTENSION:
            # Credited to the balance; the extension is paid from it when what arrived covers
            # it and it is still awaited, else the money stays on the balance.
            if not pay_extension(
                book, payment, reason=f"Payment {payment.reference} settled: {reason}"
            ):
                raise ExtensionNoLongerPayable()  # nothing written: the transaction rolls back
        else:
            order = Order.objects.get(pk=payment.order_id)
            if not pay_order(
                book, payment, order, reason=f"Payment {payment.reference} settled: {reason}"
            ):
                raise OrderNoLongerPayable()
            close_siblings(book, payment, payments)
        book.status(payment, PaymentStatus.RESOLVED, f"marked settled: {reason}")
        book.flush()
    return payment


def payment_credit_balance(*, payment_id: int, actor: User, reason: str) -> CryptoPayment:
    """Credit everything received to the customer's balance; an order under review goes back
    to awaiting payment, so the customer can pay it from the balance."""
    reason = _reason(reason)
    with transaction.atomic():
        payment, _payments, book = _open_review(payment_id, actor)
        if unallocated_usd(payment) <= 0:
            raise NothingReceived()
        credit_to_balance(book, payment, reason=f"by an operator: {reason}")
        if payment.order_id:
            rental_services.order_back_to_awaiting(
                order_id=payment.order_id,
                actor=actor,
                reason=f"Payment {payment.reference} credited to the balance",
            )
        book.status(payment, PaymentStatus.RESOLVED, f"credited to the balance: {reason}")
        book.flush()
    return payment


def payment_mark_invalid(*, payment_id: int, actor: User, reason: str) -> CryptoPayment:
    """The payment is void (e.g. the money was sent back outside the site): what it received
    and did not allocate is booked as refunded; an order under review is cancelled and its
    lots released."""
    reason = _reason(reason)
    with transaction.atomic():
        payment, _payments, book = _open_review(payment_id, actor)
        amount = unallocated_usd(payment)
        if amount > 0:
            payment.allocated_usd += amount
            book.post(
                payment,
                TransactionKind.REFUND,
                [
                    (book.accounts.unallocated, -amount),
                    (system_account(LedgerAccountKind.REFUNDS), amount),
                ],
                f"Payment {payment.reference} marked invalid, refunded outside: {reason}",
                f"refund:{payment.pk}:{payment.allocated_usd}",
            )
        if payment.order_id:
            rental_services.order_cancel_in_review(
                order_id=payment.order_id,
                actor=actor,
                reason=f"Payment {payment.reference} marked invalid",
            )
        book.status(payment, PaymentStatus.INVALID, f"marked invalid: {reason}")
        book.flush()
    return payment


def payment_write_off_reversed(*, payment_id: int, actor: User, reason: str) -> CryptoPayment:
    """A confirmed transfer of this payment was reversed by the chain: take its value out of
    the crypto receipts, so the ledger matches the chain again. What of it still waited in the
    receipts awaiting allocation leaves from there; what was already allocated (the order it
    paid, the balance it credited) is booked as a loss on the adjustments account. Money left
    on the payment keeps it under review; otherwise the review is closed."""
    reason = _reason(reason)
    with transaction.atomic():
        payment, _payments, book = _open_review(payment_id, actor)
        if payment.review_reason != ReviewReason.REVERSED:
            raise NotReversed()
        ids = ChainTransfer.objects.filter(
            payment=payment, status=TransferStatus.REVERSED, receipted=True
        ).values_list("pk", flat=True)
        transfers = list(lock_transfers(ids).values())
        if not transfers:
            raise NotReversed()
        units = sum(t.amount_units for t in transfers)
        written_off_before = LedgerTransaction.objects.filter(
            payment=payment, idempotency_key__startswith=f"write-off:{payment.pk}:"
        ).count()
        remaining = units_to_usd(payment.receipted_units - units, payment.decimals)
        amount = payment.receipted_usd - remaining
        from_unallocated = min(amount, max(unallocated_usd(payment), Decimal("0.00")))
        loss = amount - from_unallocated
        payment.receipted_units -= units
        payment.receipted_usd = remaining
        payment.written_off_usd += loss
        if amount > 0:
            lines = [(book.accounts.receipts_of(payment), amount)]
            if from_unallocated > 0:
                lines.append((book.accounts.unallocated, -from_unallocated))
            if loss > 0:
                lines.append((system_account(LedgerAccountKind.ADJUSTMENTS), -loss))
            book.post(
                payment,
                TransactionKind.ADJUSTMENT,
                lines,
                f"Payment {payment.reference}: reversed transfers written off: {reason}",
                f"write-off:{payment.pk}:{written_off_before + 1}",
            )
        # Should the chain include them again, they are counted again.
        ChainTransfer.objects.filter(pk__in=[t.pk for t in transfers]).update(receipted=False)
        book.dirty[payment.pk] = payment
        if unallocated_usd(payment) > 0:
            # Other money is still on it: the review goes on, about that money.
            underpaid = payment.order_id and payment.received_units < payment.amount_due_units
            book.review_reason(
                payment, ReviewReason.UNDERPAID if underpaid else ReviewReason.UNMATCHED
            )
            book.event(payment, PaymentEventKind.OPERATOR_NOTE, f"reversal written off: {reason}")
        else:
            book.status(payment, PaymentStatus.RESOLVED, f"reversal written off: {reason}")
            if payment.order_id:  # an order waiting on this review can be paid again
                rental_services.order_back_to_awaiting(
                    order_id=payment.order_id,
                    actor=actor,
                    reason=f"Payment {payment.reference}: reversed transfers written off",
                )
        book.flush()
    return payment
