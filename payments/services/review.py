"""Operators resolve what the watcher cannot: payments in review and unmatched transfers.

Every action needs a reason, records the acting user in the payment's history, and moves money
only through the ledger, out of the receipts awaiting allocation.
"""

from decimal import Decimal

from django.db import transaction
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from rental import services as rental_services
from rental.models import OrderStatus

from ..exceptions import PaymentError
from ..models import (
    ChainTransfer,
    CryptoPayment,
    LedgerAccountKind,
    PaymentEvent,
    PaymentStatus,
    TransferReview,
    TransferStatus,
)
from ..networks import units_to_usd
from .ledger import customer_account, lock_accounts, system_account
from .watcher import allocate_to_purpose, credit_received_to_balance, received_usd


class NotInReview(PaymentError):
    message = _("Only a payment under review can be resolved this way.")


class ReasonRequired(PaymentError):
    message = _("Give a reason: it is kept in the payment's history.")


class OrderNoLongerPayable(PaymentError):
    message = _(
        "The order was cancelled and its stock released: credit the money to the customer's "
        "balance instead."
    )


class NothingReceived(PaymentError):
    message = _("Nothing confirmed was received on this payment.")


class TransferNotOpen(PaymentError):
    message = _("This transfer is not waiting for an operator.")


def _reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise ReasonRequired()
    return reason[:500]


def _locked_review_payment(payment_id: int) -> CryptoPayment:
    payment = CryptoPayment.objects.select_for_update(of=("self",)).get(pk=payment_id)
    if payment.status != PaymentStatus.NEEDS_REVIEW:
        raise NotInReview()
    return payment


def _lock_money(payment: CryptoPayment) -> None:
    lock_accounts(
        [
            system_account(LedgerAccountKind.UNALLOCATED),
            system_account(LedgerAccountKind.REVENUE),
            customer_account(payment.customer),
        ]
    )


def _resolve(payment: CryptoPayment, status: str, kind: str, actor: User, reason: str) -> None:
    payment.status = status
    payment.save(update_fields=["status", "updated_at"])
    PaymentEvent.objects.create(payment=payment, kind=kind, actor=actor, reason=reason)


def payment_mark_settled(*, payment_id: int, actor: User, reason: str) -> CryptoPayment:
    """Accept what was received as the payment: the order is paid (revenue gets what arrived,
    at most the order total; a surplus goes to the balance), a top-up is credited."""
    reason = _reason(reason)
    with transaction.atomic():
        payment = _locked_review_payment(payment_id)
        if received_usd(payment) <= 0:
            raise NothingReceived()
        if payment.order_id and payment.order.status != OrderStatus.PAYMENT_REVIEW:
            raise OrderNoLongerPayable()
        _lock_money(payment)
        allocate_to_purpose(payment, actor=actor, reason=f"settled by an operator: {reason}")
        _resolve(payment, PaymentStatus.RESOLVED, "marked_settled", actor, reason)
    return payment


def payment_credit_balance(*, payment_id: int, actor: User, reason: str) -> CryptoPayment:
    """Credit everything received to the customer's balance; an order under review goes back
    to awaiting payment, so the customer can pay it from the balance."""
    reason = _reason(reason)
    with transaction.atomic():
        payment = _locked_review_payment(payment_id)
        received = received_usd(payment)
        if received <= 0:
            raise NothingReceived()
        _lock_money(payment)
        credit_received_to_balance(
            payment,
            amount=received,
            memo=f"Payment {payment.reference} credited to the balance: {reason}",
            idempotency_key=f"review-credit:{payment.pk}",
            actor=actor,
        )
        if payment.order_id and payment.order.status == OrderStatus.PAYMENT_REVIEW:
            rental_services.order_set_status(
                order_id=payment.order_id,
                to_status=OrderStatus.AWAITING_PAYMENT,
                actor=actor,
                reason=f"Payment {payment.reference} credited to the balance",
            )
        _resolve(payment, PaymentStatus.RESOLVED, "credited_to_balance", actor, reason)
    return payment


def payment_mark_invalid(*, payment_id: int, actor: User, reason: str) -> CryptoPayment:
    """The payment is void (e.g. refunded outside): money received stays in the receipts
    awaiting allocation; an order under review is cancelled and its stock released."""
    reason = _reason(reason)
    with transaction.atomic():
        payment = _locked_review_payment(payment_id)
        if payment.order_id and payment.order.status == OrderStatus.PAYMENT_REVIEW:
            rental_services.order_set_status(
                order_id=payment.order_id,
                to_status=OrderStatus.CANCELLED,
                actor=actor,
                reason=f"Payment {payment.reference} marked invalid",
            )
        _resolve(payment, PaymentStatus.INVALID, "marked_invalid", actor, reason)
    return payment


def _locked_open_transfer(transfer_id: int) -> tuple[ChainTransfer, CryptoPayment | None]:
    payment_id = (
        ChainTransfer.objects.filter(pk=transfer_id).values_list("payment_id", flat=True).first()
    )
    payment = None
    if payment_id:
        payment = CryptoPayment.objects.select_for_update(of=("self",)).get(pk=payment_id)
    transfer = ChainTransfer.objects.select_for_update().get(pk=transfer_id)
    if transfer.review_state != TransferReview.OPEN or transfer.status != TransferStatus.CONFIRMED:
        raise TransferNotOpen()
    return transfer, payment


def transfer_credit_balance(*, transfer_id: int, actor: User, reason: str) -> ChainTransfer:
    """Credit an unmatched transfer to the balance of the customer whose address received it."""
    reason = _reason(reason)
    with transaction.atomic():
        transfer, payment = _locked_open_transfer(transfer_id)
        if payment is None:
            raise TransferNotOpen()
        amount: Decimal = units_to_usd(transfer.amount_units, payment.decimals)
        if amount > 0:
            _lock_money(payment)
            credit_received_to_balance(
                payment,
                amount=amount,
                memo=f"Transfer {transfer.tx_hash} credited to the balance: {reason}",
                idempotency_key=f"transfer-credit:{transfer.pk}",
                actor=actor,
            )
        transfer.review_state = TransferReview.CREDITED
        transfer.save(update_fields=["review_state"])
        PaymentEvent.objects.create(
            payment=payment,
            kind="transfer_credited",
            actor=actor,
            reason=reason,
            data={"tx_hash": transfer.tx_hash},
        )
    return transfer


def transfer_mark_invalid(*, transfer_id: int, actor: User, reason: str) -> ChainTransfer:
    reason = _reason(reason)
    with transaction.atomic():
        transfer, payment = _locked_open_transfer(transfer_id)
        transfer.review_state = TransferReview.INVALID
        transfer.save(update_fields=["review_state"])
        if payment is not None:
            PaymentEvent.objects.create(
                payment=payment,
                kind="transfer_invalid",
                actor=actor,
                reason=reason,
                data={"tx_hash": transfer.tx_hash},
            )
    return transfer
