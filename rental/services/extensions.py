"""Extending an active rental: more days on the same cards, priced when asked for.

An extension is created awaiting payment with the lot price of its duration frozen (the
catalogue's price now × the order's lots), like an order. Payments pays it, from the balance or
in stablecoins, through the intent `extension_pay`: the order's end moves by the duration and
the rental enters its next period (Order.period), whose reminders are due again before the new
end. The cards stay allocated: nothing is released or allocated.

Locks: the order row, then the extension row (after the payment and ledger locks a payments
caller holds: payments.locks). `extension_set_status` is the one way an extension changes
status.
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from outbox.messages import enqueue
from statemachine import StateMachine

from ..exceptions import InvalidTransition, PriceUnavailable, RentalError
from ..locks import lock_extension, lock_order
from ..models import (
    EXTENSION_TRANSITIONS,
    ExtensionStatus,
    ExtensionStatusChange,
    LotPrice,
    Order,
    OrderEmail,
    OrderEmailKind,
    OrderExtension,
    OrderStatus,
)
from ..pricing import DURATIONS_DAYS, quote
from .events import order_extended_emit
from .intents import hold_deadline

logger = logging.getLogger(__name__)


class InvalidExtensionTransition(InvalidTransition):
    message = _("This extension cannot change to that status now.")


class OrderNotExtendable(RentalError):
    message = _("Only an active rental can be extended, before its end.")


class ExtensionPending(RentalError):
    """Another extension of this order already awaits payment (one at a time)."""

    def __init__(self, pending: OrderExtension):
        self.pending = pending
        super().__init__(
            gettext(
                "An extension of %(days)d days (%(reference)s) already awaits payment for "
                "this order: pay or cancel it first."
            )
            % {"days": pending.duration_days, "reference": pending.reference}
        )


class ExtensionNotAwaitingPayment(RentalError):
    message = _("This extension is no longer awaiting payment.")


class ExtensionHoldExpired(ExtensionNotAwaitingPayment):
    message = _(
        "The price of this extension was held for a limited time, which has run out: ask for "
        "the extension again at today's price."
    )


def _hold_expired(extension: OrderExtension, now: datetime) -> bool:
    return extension.hold_until is not None and extension.hold_until < now


def _locked_order(order_id: int, customer: User | None = None) -> Order:
    return lock_order(order_id, customer=customer)


def _order_id_of(extension_id: int, customer: User | None = None) -> int:
    """The extension's order (fixed at creation: read without a lock, to lock it first)."""
    extensions = OrderExtension.objects.filter(pk=extension_id)
    if customer is not None:
        extensions = extensions.filter(customer=customer)
    order_id = extensions.values_list("order_id", flat=True).first()
    if order_id is None:
        raise OrderExtension.DoesNotExist()
    return order_id


def _describe(extension: OrderExtension) -> tuple[str, dict]:
    return (
        f"extension {extension.reference} of order {extension.order_id}",
        {"extension": extension.reference, "order_id": extension.order_id},
    )


# The extension's states: EXTENSION_TRANSITIONS, its audit rows and its log line.
EXTENSION_STATES = StateMachine(
    name="extension",
    transitions=EXTENSION_TRANSITIONS,
    audit_model=ExtensionStatusChange,
    refuse=lambda extension, to_status: InvalidExtensionTransition(),
    logger=logger,
    describe=_describe,
)


def extension_set_status(
    *, extension_id: int, to_status: str, actor: User | None, reason: str, **fields
) -> OrderExtension:
    """The one way an extension changes status.

    The caller holds its order's row lock (order, then extension). Locks the extension row,
    checks EXTENSION_TRANSITIONS, saves the status with `fields` (the period paid, say) and
    writes the status-change row. Raises InvalidExtensionTransition otherwise.
    """
    return EXTENSION_STATES.set(
        lock=lock_extension,
        pk=extension_id,
        to_status=to_status,
        actor=actor,
        reason=reason,
        fields=fields,
    )


def extension_create(*, order_id: int, customer: User, duration_days: int) -> OrderExtension:
    """Ask for `duration_days` more days on the customer's active order, at the catalogue's
    lot price of that duration now × the order's lots, frozen on the extension.

    One extension awaits payment per order: asking again for the same duration returns it (a
    double click), another duration raises ExtensionPending. Raises Order.DoesNotExist for
    another customer's order, OrderNotExtendable unless the order is active and before its
    end, PriceUnavailable when the model has no price for that duration.
    """
    if duration_days not in DURATIONS_DAYS:
        raise ValueError(f"duration must be one of {DURATIONS_DAYS} days")
    with transaction.atomic():
        order = _locked_order(order_id, customer)
        if order.status != OrderStatus.ACTIVE or order.ends_at <= timezone.now():
            raise OrderNotExtendable()
        pending = OrderExtension.objects.filter(
            order=order, status=ExtensionStatus.AWAITING_PAYMENT
        ).first()
        if pending is not None and _hold_expired(pending, timezone.now()):
            extension_set_status(
                extension_id=pending.pk,
                to_status=ExtensionStatus.CANCELLED,
                actor=None,
                reason=f"Price held for {settings.ORDER_HOLD_MINUTES} minutes without a payment",
            )
            pending = None
        if pending is not None:
            if pending.duration_days == duration_days:
                return pending
            raise ExtensionPending(pending)
        price = LotPrice.objects.filter(
            gpu_model_id=order.gpu_model_id, duration_days=duration_days
        ).first()
        if price is None:
            raise PriceUnavailable()
        priced = quote(
            lot_price_usd=price.price_usd,
            duration_days=duration_days,
            lots=order.lots,
            cards_per_lot=order.cards_per_lot,
        )
        extension = OrderExtension.objects.create(
            order=order,
            customer=customer,
            hold_until=hold_deadline(),
            duration_days=priced.duration_days,
            lots=priced.lots,
            lot_price_usd=priced.lot_price_usd,
            total_usd=priced.total_usd,
        )
        EXTENSION_STATES.record(
            extension,
            from_status="",
            to_status=ExtensionStatus.AWAITING_PAYMENT,
            actor=customer,
            reason="Extension requested",
        )
    return extension


def extension_cancel(*, extension_id: int, customer: User) -> OrderExtension:
    """The customer gives up an extension awaiting payment. Raises OrderExtension.DoesNotExist
    for another customer's, ExtensionNotAwaitingPayment once it is paid or cancelled."""
    with transaction.atomic():
        _locked_order(_order_id_of(extension_id, customer))
        extension = OrderExtension.objects.get(pk=extension_id)
        if extension.status != ExtensionStatus.AWAITING_PAYMENT:
            raise ExtensionNotAwaitingPayment()
        return extension_set_status(
            extension_id=extension_id,
            to_status=ExtensionStatus.CANCELLED,
            actor=customer,
            reason="Cancelled by the customer",
        )


def extensions_cancel_for_order(
    *, order_id: int, reason: str, actor: User | None = None
) -> list[int]:
    """The order ended (its end, or ended early by an operator): its extensions awaiting
    payment can no longer be paid. Called under the order's row lock, in the transaction that
    ends it; money still arriving for them goes to the customer's balance (payments)."""
    with transaction.atomic():
        _locked_order(order_id)
        waiting = list(
            OrderExtension.objects.filter(
                order_id=order_id, status=ExtensionStatus.AWAITING_PAYMENT
            ).values_list("pk", flat=True)
        )
        for extension_id in waiting:
            extension_set_status(
                extension_id=extension_id,
                to_status=ExtensionStatus.CANCELLED,
                actor=actor,
                reason=reason,
            )
    return waiting


# ------------------------------------------------------------------ intents of payments


def extension_hold_for_payment(*, extension_id: int, customer: User) -> OrderExtension:
    """Payments opens a stablecoin payment for the customer's extension: it must still await
    payment, on an active order before its end. Raises OrderExtension.DoesNotExist for another
    customer's, ExtensionNotAwaitingPayment or OrderNotExtendable otherwise."""
    with transaction.atomic():
        order = _locked_order(_order_id_of(extension_id, customer))
        extension = lock_extension(extension_id)
        if extension.status != ExtensionStatus.AWAITING_PAYMENT:
            raise ExtensionNotAwaitingPayment()
        if _hold_expired(extension, timezone.now()):
            raise ExtensionHoldExpired()
        if order.status != OrderStatus.ACTIVE or order.ends_at <= timezone.now():
            raise OrderNotExtendable()
        if extension.hold_until is not None:  # the payment holds the price until it expires
            extension.hold_until = None
            extension.save(update_fields=["hold_until", "updated_at"])
    return extension


def extension_release_unpaid(*, extension_id: int, reason: str) -> bool:
    """The stablecoin payment that held the extension's price expired with nothing received:
    the extension is cancelled (asked for again, it gets today's price). False when it was
    paid, cancelled, or is held by its own deadline again."""
    with transaction.atomic():
        _locked_order(_order_id_of(extension_id))
        extension = OrderExtension.objects.get(pk=extension_id)
        if extension.status != ExtensionStatus.AWAITING_PAYMENT or extension.hold_until:
            return False
        extension_set_status(
            extension_id=extension_id,
            to_status=ExtensionStatus.CANCELLED,
            actor=None,
            reason=reason,
        )
    return True


def extensions_release_expired_holds(*, now: datetime | None = None) -> list[int]:
    """Cancel the extensions whose price hold ran out with no payment opened (the minute
    tick; safe to run twice); their ids."""
    now = now or timezone.now()
    due = OrderExtension.objects.filter(
        status=ExtensionStatus.AWAITING_PAYMENT, hold_until__lt=now
    ).values_list("pk", flat=True)
    released = []
    for extension_id in due:
        with transaction.atomic():
            _locked_order(_order_id_of(extension_id))
            extension = OrderExtension.objects.get(pk=extension_id)
            if extension.status != ExtensionStatus.AWAITING_PAYMENT or not _hold_expired(
                extension, now
            ):
                continue
            extension_set_status(
                extension_id=extension_id,
                to_status=ExtensionStatus.CANCELLED,
                actor=None,
                reason=f"Price held for {settings.ORDER_HOLD_MINUTES} minutes without a payment",
            )
            released.append(extension_id)
    return released


def extension_pay(
    *, extension_id: int, actor: User | None, reason: str, now: datetime | None = None
) -> bool:
    """The money for the extension is settled: if it still awaits payment and its order is
    still active before its end, the end moves by the duration, the rental enters its next
    period (its reminders start again) and the extension is paid — True. False, changing
    nothing, otherwise (paid already, cancelled, the order ended): the caller then leaves the
    money on the customer's balance.

    Locks the order, then the extension; the caller (payments) holds its own locks first.
    """

    now = now or timezone.now()
    with transaction.atomic():
        order = _locked_order(_order_id_of(extension_id))
        extension = lock_extension(extension_id)
        if (
            extension.status != ExtensionStatus.AWAITING_PAYMENT
            or _hold_expired(extension, now)  # its price ran out (a payment clears the hold)
            or order.status != OrderStatus.ACTIVE
            or order.ends_at <= now
        ):
            return False
        starts_at = order.ends_at
        order.ends_at = starts_at + timedelta(days=extension.duration_days)
        order.period += 1
        order.save(update_fields=["ends_at", "period", "updated_at"])
        extension = extension_set_status(
            extension_id=extension.pk,
            to_status=ExtensionStatus.PAID,
            actor=actor,
            reason=reason,
            paid_at=now,
            period_starts_at=starts_at,
            period_ends_at=order.ends_at,
        )
        order_extended_emit(order, extension)  # webhooks: order.extended
        enqueue("rental.tasks.extension_email", extension.pk)
    return True


# ------------------------------------------------------------------ the customer's email


def _period_of(extension: OrderExtension) -> int:
    """The rental period the paid extension opened: 1 for the first paid, 2 for the next..."""
    return OrderExtension.objects.filter(
        order_id=extension.order_id,
        status=ExtensionStatus.PAID,
        period_starts_at__lte=extension.period_starts_at,
    ).count()


def extension_email_send(*, extension_id: int) -> bool:
    """Tell the customer the extension is paid and when the rental now ends; once.

    Recorded as the payment-received email of the period it opened (OrderEmail, unique per
    order, kind and period): the record and the send share one transaction, so a failed send
    is retried and a task delivered twice sends once.
    """
    extension = OrderExtension.objects.select_related("order__customer").get(pk=extension_id)
    if extension.status != ExtensionStatus.PAID:
        return False
    order, customer = extension.order, extension.order.customer
    try:
        with transaction.atomic():
            OrderEmail.objects.create(
                order=order, kind=OrderEmailKind.PAYMENT_RECEIVED, period=_period_of(extension)
            )
            with translation.override(customer.language or settings.LANGUAGE_CODE):
                context = {
                    "order": order,
                    "extension": extension,
                    "customer": customer,
                    "order_url": settings.SITE_URL.rstrip("/")
                    + reverse("rental:order_detail", kwargs={"order_id": order.pk}),
                }
                subject = render_to_string("rental/extended_email_subject.txt", context).strip()
                body = render_to_string("rental/extended_email.txt", context)
            send_mail(subject, body, None, [customer.email])
    except IntegrityError:
        return False
    return True
