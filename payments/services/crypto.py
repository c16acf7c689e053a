"""Crypto payments: creating them, the customer's declaration, expiry."""

from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from rental import services as rental_services
from rental.models import Order, OrderStatus
from rental.money import usd

from ..addresses import derive_address
from ..exceptions import OrderNotPayable, PaymentError, PaymentNotDeclarable
from ..models import (
    DECLARABLE_STATUSES,
    LIVE_STATUSES,
    AddressIndexCounter,
    ChainCursor,
    CryptoPayment,
    DepositAddress,
    PaymentPurpose,
    PaymentStatus,
    ReviewReason,
)
from ..networks import Asset, Network, enabled_networks
from .events import payment_event

# The watcher reads up to 1-2 blocks behind the head every few seconds: a payment expires only
# once a scan has run this long after its expiry, so a late worker never expires a paid payment.
EXPIRY_SCAN_MARGIN = timedelta(seconds=30)


class NetworkUnavailable(PaymentError):
    message = _("This asset and network are not available for payment right now.")


class TopUpTooSmall(PaymentError):
    def __init__(self, minimum: Decimal):
        super().__init__(_("The minimum top-up is %(minimum)s USD.") % {"minimum": minimum})


def _asset_on(network_key: str, asset_symbol: str) -> tuple[Network, Asset]:
    network = enabled_networks().get(network_key)
    if network is None:
        raise NetworkUnavailable()
    try:
        return network, network.asset(asset_symbol)
    except KeyError:
        raise NetworkUnavailable() from None


def _allocate_address() -> DepositAddress:
    """The next derivation index, under the counter's row lock; an index is never reused."""
    AddressIndexCounter.objects.get_or_create(pk=1)
    counter = AddressIndexCounter.objects.select_for_update().get(pk=1)
    index = counter.next_index
    counter.next_index = index + 1
    counter.save(update_fields=["next_index"])
    return DepositAddress.objects.create(
        derivation_index=index, address=derive_address(xpub=settings.PAYMENT_XPUB, index=index)
    )


def _new_payment(*, customer, purpose, order, network, asset, amount_usd) -> CryptoPayment:
    now = timezone.now()
    expires_at = now + timedelta(minutes=settings.PAYMENT_EXPIRY_MINUTES)
    payment = CryptoPayment.objects.create(
        customer=customer,
        purpose=purpose,
        order=order,
        network=network.key,
        chain_id=network.chain_id,
        asset=asset.symbol,
        token_address=asset.token_address,
        decimals=asset.decimals,
        deposit_address=_allocate_address(),
        amount_due_usd=amount_usd,
        amount_due_units=asset.to_units(amount_usd),
        confirmations_required=network.confirmations,
        expires_at=expires_at,
        monitor_until=expires_at + timedelta(hours=settings.PAYMENT_MONITOR_HOURS),
    )
    ChainCursor.objects.get_or_create(network=network.key, defaults={"next_block": 0})
    payment_event(payment, "created", actor=customer)
    return payment


def payment_create_for_order(
    *, order_id: int, customer: User, network_key: str, asset_symbol: str
) -> CryptoPayment:
    """A stablecoin payment for the whole order, at a fresh address.

    The order keeps one live payment: asking again for the same asset and network returns it;
    another choice replaces a payment on which nothing was seen (its address stays watched
    until its monitoring ends, so money sent there late is still found and reviewed).
    """
    network, asset = _asset_on(network_key, asset_symbol)
    live = CryptoPayment.objects.select_for_update(of=("self",)).filter(
        order_id=order_id, customer=customer, status__in=LIVE_STATUSES
    )
    with transaction.atomic():
        # Lock order everywhere: payments (by pk), then ledger accounts, then the order. The
        # watcher and the expiry lock a payment before its order; taking the order first here
        # deadlocked against them.
        list(live.order_by("pk"))
        order = (
            Order.objects.select_for_update(of=("self",))
            .filter(pk=order_id, customer=customer)
            .first()
        )
        if order is None:
            raise Order.DoesNotExist()
        if order.status != OrderStatus.AWAITING_PAYMENT:
            raise OrderNotPayable()
        # Read again under the order lock: a payment opened meanwhile by a double submission
        # is found here (only this customer's requests create one, and they queue on the order).
        for payment in live.order_by("pk"):
            if payment.network == network.key and payment.asset == asset.symbol:
                return payment
            if payment.status == PaymentStatus.DETECTED or payment.seen_units:
                raise PaymentError(
                    _("A transfer for this order is already being confirmed; wait for it.")
                )
            payment.status = PaymentStatus.EXPIRED
            payment.save(update_fields=["status", "updated_at"])
            payment_event(payment, "replaced", actor=customer)
        return _new_payment(
            customer=customer,
            purpose=PaymentPurpose.ORDER,
            order=order,
            network=network,
            asset=asset,
            amount_usd=order.total_usd,
        )


def payment_create_top_up(
    *, customer: User, amount_usd: Decimal, network_key: str, asset_symbol: str
) -> CryptoPayment:
    network, asset = _asset_on(network_key, asset_symbol)
    minimum = usd(settings.TOP_UP_MINIMUM_USD)
    amount_usd = usd(amount_usd)
    if amount_usd < minimum:
        raise TopUpTooSmall(minimum)
    with transaction.atomic():
        return _new_payment(
            customer=customer,
            purpose=PaymentPurpose.TOP_UP,
            order=None,
            network=network,
            asset=asset,
            amount_usd=amount_usd,
        )


def payment_declare(*, payment_id: int, customer: User, tx_hash: str = "") -> CryptoPayment:
    """Record the customer's "I have paid": once, never a change of the money state.

    It asks the worker to look now (after the commit): fetch that transaction's receipt, or
    rescan the address.
    """
    from .. import tasks

    with transaction.atomic():
        payment = (
            CryptoPayment.objects.select_for_update(of=("self",))
            .filter(pk=payment_id, customer=customer)
            .first()
        )
        if payment is None:
            raise CryptoPayment.DoesNotExist()
        if payment.declared_at is not None:
            return payment
        if payment.status not in DECLARABLE_STATUSES:
            raise PaymentNotDeclarable()
        payment.declared_at = timezone.now()
        payment.declared_tx_hash = tx_hash.lower()
        payment.save(update_fields=["declared_at", "declared_tx_hash", "updated_at"])
        payment_event(payment, "declared", actor=customer, tx_hash=payment.declared_tx_hash)
        tasks.payment_check.delay_on_commit(payment.pk)
    return payment


def payments_expire(*, now=None) -> int:
    """Expire payments whose time ran out; return how many changed.

    Nothing received: the payment expires (still watched until monitor_until) and its order is
    cancelled, which releases the stock. Less than due: the payment and its order go to review.
    A payment whose network has not been scanned since its expiry is left alone: an RPC outage
    never expires a payment.
    """
    now = now or timezone.now()
    changed = 0
    due = CryptoPayment.objects.filter(status__in=LIVE_STATUSES, expires_at__lt=now).values_list(
        "pk", "network", "expires_at"
    )
    scanned = dict(ChainCursor.objects.values_list("network", "last_scan_at"))
    for payment_id, network, expires_at in due:
        last_scan = scanned.get(network)
        if last_scan is None or last_scan < expires_at + EXPIRY_SCAN_MARGIN:
            continue
        changed += _expire_one(payment_id)
    return changed


def _expire_one(payment_id: int) -> int:
    with transaction.atomic():
        payment = CryptoPayment.objects.select_for_update(of=("self",)).get(pk=payment_id)
        if payment.status not in LIVE_STATUSES:
            return 0
        if (
            payment.seen_units
            and payment.received_units + payment.seen_units >= payment.amount_due_units
        ):
            return 0  # enough is confirming: settlement decides
        if payment.received_units == 0 and payment.seen_units == 0:
            payment.status = PaymentStatus.EXPIRED
            payment.save(update_fields=["status", "updated_at"])
            payment_event(payment, "expired")
            if payment.order_id:
                rental_services.order_set_status(
                    order_id=payment.order_id,
                    to_status=OrderStatus.CANCELLED,
                    actor=None,
                    reason=f"Payment {payment.reference} expired with nothing received",
                )
            return 1
        payment.status = PaymentStatus.NEEDS_REVIEW
        payment.review_reason = ReviewReason.UNDERPAID
        payment.save(update_fields=["status", "review_reason", "updated_at"])
        payment_event(payment, "review", reason="underpaid at expiry")
        if payment.order_id:
            rental_services.order_set_status(
                order_id=payment.order_id,
                to_status=OrderStatus.PAYMENT_REVIEW,
                actor=None,
                reason=f"Payment {payment.reference} underpaid at expiry",
            )
        return 1
