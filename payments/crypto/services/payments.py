"""Crypto payments: creating them, the customer's declaration, expiry."""

import logging
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from outbox.messages import enqueue
from rental import services as rental_services
from rental.exceptions import OrderNotAwaitingPayment
from rental.models import Order
from rental.money import usd

from ...chain.addresses import derive_address
from ...chain.networks import Asset, Network, enabled_networks
from ...exceptions import OrderNotPayable, PaymentError, PaymentNotDeclarable
from ...locks import (
    lock_address_counter,
    lock_customer_payment,
    lock_order_for_payment_changes,
    lock_order_payments,
    lock_payments,
)
from ...models import (
    DECLARABLE_STATUSES,
    LIVE_STATUSES,
    ChainCursor,
    CryptoPayment,
    DepositAddress,
    PaymentEvent,
    PaymentEventKind,
    PaymentPurpose,
    PaymentStatus,
    ReviewReason,
)
from .status import payment_set_status

logger = logging.getLogger(__name__)

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
    counter = lock_address_counter()
    index = counter.next_index
    counter.next_index = index + 1
    counter.save(update_fields=["next_index"])
    return DepositAddress.objects.create(
        derivation_index=index, address=derive_address(xpub=settings.PAYMENT_XPUB, index=index)
    )


def _head_block(network: Network) -> int | None:
    """The network's head now, read before any lock is taken. None when the node does not
    answer: the payment is still opened (the watcher catches up once the node is back), and
    the scan then starts far enough back to cover it (scanning.earliest_watched_block)."""
    from ...chain.rpc import ChainClient, RpcError

    try:
        return ChainClient(network).head()
    except RpcError as exc:
        logger.warning("network %s: head unknown when opening a payment: %s", network.key, exc)
        return None


def _new_payment(
    *, customer, purpose, order, network, asset, amount_usd, head, extension=None
) -> CryptoPayment:
    now = timezone.now()
    expires_at = now + timedelta(minutes=settings.PAYMENT_EXPIRY_MINUTES)
    payment = CryptoPayment.objects.create(
        customer=customer,
        purpose=purpose,
        order=order,
        extension=extension,
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
        created_block=head,
    )
    # The network's first payment starts its cursor at this block: the scan never starts
    # after a block this payment can be paid in.
    ChainCursor.objects.get_or_create(network=network.key, defaults={"next_block": head or 0})
    PaymentEvent.objects.create(
        payment=payment, kind=PaymentEventKind.CREATED, actor=customer, data={"block": head}
    )
    return payment


def live_payment_reused_or_replaced(
    live: list[CryptoPayment], *, network, asset, actor: User, busy: str
) -> CryptoPayment | None:
    """One live payment per order or extension (the `live` ones, locked by the caller): the
    one for this asset and network is returned as it is; otherwise PaymentError(`busy`) while
    a transfer to another is confirming, else the others close (their addresses stay watched:
    money sent there anyway goes to the balance) and None says to open a new one."""
    for payment in live:
        if payment.network == network.key and payment.asset == asset.symbol:
            return payment
    for payment in live:
        if payment.status == PaymentStatus.DETECTED or payment.seen_units:
            raise PaymentError(busy)
    for payment in live:
        payment_set_status(
            payment,
            to_status=PaymentStatus.CLOSED,
            actor=actor,
            reason="replaced by another asset or network",
        )
    return None


def payment_create_for_order(
    *, order_id: int, customer: User, network_key: str, asset_symbol: str
) -> CryptoPayment:
    """A stablecoin payment for the whole order, at a fresh address; it holds the order's lots
    until it expires.

    The order keeps one live payment: asking again for the same asset and network returns it;
    another choice closes a payment on which nothing was seen (its address stays watched, and
    money sent there anyway goes to the customer's balance).
    """
    network, asset = _asset_on(network_key, asset_symbol)
    head = _head_block(network)
    with transaction.atomic():
        # Lock order (payments.locks): the order's mutex, its live payments, rental's order.
        # A double submission queues on the mutex; the payment it opened is found here.
        lock_order_for_payment_changes(order_id=order_id)
        live = lock_order_payments(order_id=order_id)
        if any(payment.customer_id != customer.pk for payment in live):
            raise Order.DoesNotExist()
        try:
            order = rental_services.order_hold_for_payment(order_id=order_id, customer=customer)
        except OrderNotAwaitingPayment:
            raise OrderNotPayable() from None
        same = live_payment_reused_or_replaced(
            live,
            network=network,
            asset=asset,
            actor=customer,
            busy=_("A transfer for this order is already being confirmed; wait for it."),
        )
        if same is not None:
            return same
        return _new_payment(
            customer=customer,
            purpose=PaymentPurpose.ORDER,
            order=order,
            network=network,
            asset=asset,
            amount_usd=order.total_usd,
            head=head,
        )


def payment_create_top_up(
    *, customer: User, amount_usd: Decimal, network_key: str, asset_symbol: str
) -> CryptoPayment:
    network, asset = _asset_on(network_key, asset_symbol)
    minimum = usd(settings.TOP_UP_MINIMUM_USD)
    amount_usd = usd(amount_usd)
    if amount_usd < minimum:
        raise TopUpTooSmall(minimum)
    head = _head_block(network)
    with transaction.atomic():
        return _new_payment(
            customer=customer,
            purpose=PaymentPurpose.TOP_UP,
            order=None,
            network=network,
            asset=asset,
            amount_usd=amount_usd,
            head=head,
        )


def payment_declare(*, payment_id: int, customer: User, tx_hash: str = "") -> CryptoPayment:
    """Record the customer's "I have paid": once, never a change of the money state.

    It asks the worker to look now (after the commit): fetch that transaction's receipt, or
    rescan the address.
    """

    with transaction.atomic():
        payment = lock_customer_payment(payment_id=payment_id, customer=customer)
        if payment.declared_at is not None:
            return payment
        if payment.status not in DECLARABLE_STATUSES:
            raise PaymentNotDeclarable()
        payment.declared_at = timezone.now()
        payment.declared_tx_hash = tx_hash.lower()
        payment.save(update_fields=["declared_at", "declared_tx_hash", "updated_at"])
        PaymentEvent.objects.create(
            payment=payment,
            kind=PaymentEventKind.DECLARED,
            actor=customer,
            data={"tx_hash": payment.declared_tx_hash},
        )
        enqueue("payments.tasks.payment_check", payment.pk)
    return payment


def payments_expire(*, now=None) -> int:
    """Expire payments whose time ran out; return how many changed.

    Nothing received: the payment expires (still watched until monitor_until) and its order,
    if it still awaits payment, is released. Less than due: the payment goes to review, and
    its order with it. Enough seen and confirming: settlement decides. A payment whose network
    has not been scanned since its expiry is left alone: an RPC outage never expires a
    payment. One payment that fails is logged and skipped: it never stops the others.
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
        try:
            changed += payment_expire(payment_id=payment_id)
        except Exception:
            logger.exception("payment %s could not be expired", payment_id)
    return changed


def payment_expire(*, payment_id: int) -> int:
    """Expire one live payment whose time ran out (see payments_expire); 1 when it changed."""
    with transaction.atomic():
        payments = lock_payments([payment_id])
        payment = payments.get(payment_id)
        if payment is None or payment.status not in LIVE_STATUSES:
            return 0
        if (
            payment.seen_units
            and payment.received_units + payment.seen_units >= payment.amount_due_units
        ):
            return 0  # enough is confirming: settlement decides
        if payment.received_units == 0 and payment.seen_units == 0:
            payment_set_status(
                payment, to_status=PaymentStatus.EXPIRED, reason="expired with nothing received"
            )
            if payment.order_id:
                rental_services.order_release_unpaid(
                    order_id=payment.order_id,
                    actor=None,
                    reason=f"Payment {payment.reference} expired with nothing received",
                )
            if payment.extension_id:  # its price was held by this payment
                rental_services.extension_release_unpaid(
                    extension_id=payment.extension_id,
                    reason=f"Payment {payment.reference} expired with nothing received",
                )
            return 1
        # What arrived waits, unallocated, in front of the operators.
        payment_set_status(
            payment,
            to_status=PaymentStatus.NEEDS_REVIEW,
            reason="less than due arrived before the expiry",
            review_reason=ReviewReason.UNDERPAID,
        )
        if payment.order_id:
            rental_services.order_send_to_review(
                order_id=payment.order_id,
                reason=f"Payment {payment.reference} underpaid at expiry",
            )
        return 1
