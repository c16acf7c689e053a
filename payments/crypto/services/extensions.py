"""Paying an order extension: from the USD balance, or in stablecoins like an order.

The extension's price is frozen on it (rental.services.extensions). Rental decides whether it
still takes the money (`extension_pay`: awaiting payment, its order active before its end);
payments never writes rental's rows. A stablecoin payment for an extension is settled like a
top-up whose credit then pays the extension from the balance in the same ledger batch
(payments.crypto.services.settling.pay_extension), so money that arrives too late simply stays on
the balance.

Lock order (payments.locks): the order's payment mutex, the extension's live payments, the
ledger accounts, then rental's order and extension.
"""

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from rental import services as rental_services
from rental.models import ExtensionStatus, OrderExtension
from rental.services.extensions import (
    ExtensionHoldExpired,
    ExtensionNotAwaitingPayment,
    OrderNotExtendable,
)

from ...exceptions import InsufficientBalance, PaymentError
from ...ledger.services.posting import ledger_post
from ...locks import lock_extension_payments, lock_order_for_payment_changes
from ...models import (
    LIVE_STATUSES,
    CryptoPayment,
    LedgerAccount,
    LedgerTransaction,
    PaymentPurpose,
    TransactionKind,
)
from .payments import _asset_on, _head_block, _new_payment, live_payment_reused_or_replaced
from .settling import close, open_book

# A stablecoin payment opened now may be confirmed up to its expiry plus the confirmations
# time: too close to the end, the rental would stop before the money counts.
CONFIRMATION_MARGIN_MINUTES = 15


class TooLateForStablecoins(PaymentError):
    message = _(
        "The rental ends too soon for a stablecoin payment to be confirmed before its end: "
        "pay this extension from your USD balance instead (top it up first if needed)."
    )


class ExtensionNotPayable(PaymentError):
    message = _(
        "This extension can no longer be paid: it was cancelled, its price hold ran out, or "
        "the rental ended. Nothing was charged."
    )


def _extension(extension_id: int, customer: User) -> OrderExtension:
    extension = (
        OrderExtension.objects.select_related("order")
        .filter(pk=extension_id, customer=customer)
        .first()
    )
    if extension is None:
        raise OrderExtension.DoesNotExist()
    return extension


def _paid_from_ledger(extension: OrderExtension) -> bool:
    return LedgerTransaction.objects.filter(
        extension=extension, kind=TransactionKind.EXTENSION_PAYMENT
    ).exists()


def extension_pay_from_balance(*, extension_id: int, customer: User) -> OrderExtension:
    """Pay the customer's extension from the USD balance, in one database transaction: debit
    the balance, credit revenue, and rental moves the order's end; the extension's open
    stablecoin payments close (money already on them goes to the balance). Idempotent: a double
    click, a second tab or a replayed request finds it paid by its one payment transaction.

    Raises OrderExtension.DoesNotExist for another customer's, InsufficientBalance when the
    balance does not cover the whole extension (nothing is charged) and ExtensionNotPayable
    when it was cancelled or its rental ended.
    """
    extension = _extension(extension_id, customer)
    with transaction.atomic():
        lock_order_for_payment_changes(order_id=extension.order_id)
        live = lock_extension_payments(extension_id=extension.pk)
        book = open_book(live, actor=customer, customer_ids=[customer.pk])
        balance = book.accounts.customers[customer.pk]
        if _paid_from_ledger(extension):
            return OrderExtension.objects.get(pk=extension.pk)
        current = OrderExtension.objects.values_list("status", flat=True).get(pk=extension.pk)
        if current != ExtensionStatus.AWAITING_PAYMENT:
            raise ExtensionNotPayable()
        available = LedgerAccount.objects.get(pk=balance.pk).balance
        if available < extension.total_usd:
            raise InsufficientBalance(available=available, required=extension.total_usd)
        if not rental_services.extension_pay(
            extension_id=extension.pk, actor=customer, reason="Paid from the USD balance"
        ):
            raise ExtensionNotPayable()
        ledger_post(
            kind=TransactionKind.EXTENSION_PAYMENT,
            lines=[(balance, -extension.total_usd), (book.accounts.revenue, extension.total_usd)],
            memo=(
                f"Extension {extension.reference} of order {extension.order.reference} "
                "paid from the USD balance"
            ),
            idempotency_key=f"extension-payment:{extension.pk}",
            actor=customer,
            order=extension.order,
            extension=extension,
        )
        for payment in live:
            close(book, payment, reason="the extension was paid from the USD balance")
        book.flush()
    return OrderExtension.objects.get(pk=extension.pk)


def extension_open_crypto_payment(
    *, extension_id: int, customer: User, network_key: str, asset_symbol: str
) -> CryptoPayment:
    """A stablecoin payment for the whole extension at a fresh address, with the expiry of
    any payment (PAYMENT_EXPIRY_MINUTES).

    The extension keeps one live payment: asking again for the same asset and network returns
    it; another choice closes one on which nothing was seen (its address stays watched; money
    sent there anyway goes to the balance). Raises OrderExtension.DoesNotExist for another
    customer's, ExtensionNotPayable once it was paid, cancelled or its rental ended.
    """
    extension = _extension(extension_id, customer)
    network, asset = _asset_on(network_key, asset_symbol)
    if extension.order.ends_at and extension.order.ends_at < timezone.now() + timedelta(
        minutes=settings.PAYMENT_EXPIRY_MINUTES + CONFIRMATION_MARGIN_MINUTES
    ):
        raise TooLateForStablecoins()
    head = _head_block(network)  # before any lock: no RPC while holding one
    with transaction.atomic():
        lock_order_for_payment_changes(order_id=extension.order_id)
        live = lock_extension_payments(extension_id=extension.pk)
        try:
            extension = rental_services.extension_hold_for_payment(
                extension_id=extension.pk, customer=customer
            )
        except ExtensionHoldExpired as exc:
            raise PaymentError(exc.message) from None
        except (ExtensionNotAwaitingPayment, OrderNotExtendable):
            raise ExtensionNotPayable() from None
        same = live_payment_reused_or_replaced(
            live,
            network=network,
            asset=asset,
            actor=customer,
            busy=_("A transfer for this extension is already being confirmed; wait for it."),
        )
        if same is not None:
            return same
        return _new_payment(
            customer=customer,
            purpose=PaymentPurpose.EXTENSION,
            order=None,
            extension=extension,
            network=network,
            asset=asset,
            amount_usd=extension.total_usd,
            head=head,
        )


def extension_cancel(*, extension_id: int, customer: User) -> OrderExtension:
    """The customer gives up an extension awaiting payment: rental cancels it and its open
    stablecoin payments close (money that arrived, or still arrives, goes to the balance).
    Raises OrderExtension.DoesNotExist for another customer's, ExtensionNotAwaitingPayment once
    it is paid or cancelled."""
    extension = _extension(extension_id, customer)
    with transaction.atomic():
        lock_order_for_payment_changes(order_id=extension.order_id)
        live = lock_extension_payments(extension_id=extension.pk)
        book = open_book(live, actor=customer)
        extension = rental_services.extension_cancel(extension_id=extension.pk, customer=customer)
        for payment in live:
            close(book, payment, reason="the extension was cancelled by the customer")
        book.flush()
    return extension


def extension_payments_close_stale() -> int:
    """Close the live stablecoin payments of extensions that can no longer be paid (rental
    cancelled them when the rental ended, early or at its end: rental cannot call payments),
    so their pages stop asking for money; money that arrives anyway goes to the balance.
    Run by the minute sweep with the expiries; returns how many payments closed."""
    stale = (
        CryptoPayment.objects.filter(purpose=PaymentPurpose.EXTENSION, status__in=LIVE_STATUSES)
        .exclude(extension__status=ExtensionStatus.AWAITING_PAYMENT)
        .values_list("extension_id", "extension__order_id")
        .distinct()
    )
    closed = 0
    for extension_id, order_id in stale:
        with transaction.atomic():
            lock_order_for_payment_changes(order_id=order_id)
            live = lock_extension_payments(extension_id=extension_id)
            status = OrderExtension.objects.values_list("status", flat=True).get(pk=extension_id)
            if status == ExtensionStatus.AWAITING_PAYMENT or not live:
                continue
            book = open_book(live)
            for payment in live:
                reason = (
                    "the extension was paid"
                    if status == ExtensionStatus.PAID
                    else "the extension was cancelled: the rental ended"
                )
                close(book, payment, reason=reason)
                closed += 1
            book.flush()
    return closed
