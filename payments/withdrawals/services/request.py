"""The customer asks for a withdrawal: the amount moves at once from the balance to the
withdrawals pending."""

import logging
from decimal import Decimal

from django.db import transaction
from django.db.models.functions import Lower
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from rental.money import usd

from ...chain.networks import Asset, Network, enabled_networks
from ...exceptions import IdempotencyConflict, InsufficientBalance
from ...formats import usd_text
from ...ledger.services.posting import customer_account, ledger_post
from ...locks import lock_accounts
from ...models import (
    DepositAddress,
    LedgerTransaction,
    TransactionKind,
    Withdrawal,
    WithdrawalEvent,
    WithdrawalStatus,
)
from .events import withdrawal_status_emit
from .status import (
    ADDRESS_PATTERN,
    ZERO_ADDRESS,
    WithdrawalAddressError,
    WithdrawalAmountError,
    WithdrawalNetworkUnavailable,
    pending_account,
    withdrawal_minimum,
)

logger = logging.getLogger(__name__)


def address_checked(address: str) -> str:
    """The address checksummed (EIP-55), or WithdrawalAddressError: 0x and 40 hexadecimal
    characters; a mixed-case address must carry a valid checksum, an all-lower or all-upper
    one has none to check."""
    if not isinstance(address, str) or not ADDRESS_PATTERN.fullmatch(address):
        raise WithdrawalAddressError(
            _("An address is 0x followed by 40 hexadecimal characters (0-9, a-f).")
        )
    from eth_utils import is_checksum_address, to_checksum_address  # not on the page path

    body = address[2:]
    if body != body.lower() and body != body.upper() and not is_checksum_address(address):
        raise WithdrawalAddressError(
            _(
                "This address's upper and lower case letters do not match its checksum "
                "(EIP-55): a character is probably mistyped. Copy it again from your wallet."
            )
        )
    checksummed = to_checksum_address(address)
    if checksummed.lower() == ZERO_ADDRESS:
        raise WithdrawalAddressError(_("The zero address burns what is sent to it."))
    return checksummed


def _asset_on(network_key: str, asset_symbol: str) -> tuple[Network, Asset]:
    network = enabled_networks().get(network_key)
    if network is None:
        raise WithdrawalNetworkUnavailable()
    try:
        return network, network.asset(asset_symbol)
    except KeyError:
        raise WithdrawalNetworkUnavailable() from None


def withdrawal_request(
    *,
    customer: User,
    amount_usd: Decimal,
    network: str,
    asset: str,
    to_address: str,
    request_key: str,
) -> Withdrawal:
    """Ask to withdraw `amount_usd` of the balance as `asset` on `network` to `to_address`.

    In one transaction: the balance and pending accounts are locked (primary-key order), the
    withdrawal is written and WITHDRAWAL_REQUEST moves the amount from the balance to the
    withdrawals pending. Idempotent per `request_key`: the same form sent twice returns the
    first withdrawal (IdempotencyConflict when it was sent with other values).

    Raises WithdrawalAmountError (below the minimum, more than the balance, not payable in the
    token's units), WithdrawalNetworkUnavailable, WithdrawalAddressError.
    """
    if not isinstance(amount_usd, Decimal) or not amount_usd.is_finite():
        raise WithdrawalAmountError(_("Enter the amount as a number, such as 25.00."))
    if usd(amount_usd) != amount_usd:
        raise WithdrawalAmountError(_("Enter at most two decimal places (cents)."))
    amount_usd = usd(amount_usd)
    minimum = withdrawal_minimum()
    if amount_usd < minimum:
        raise WithdrawalAmountError(
            gettext("The minimum withdrawal is %(minimum)s USD.") % {"minimum": usd_text(minimum)}
        )
    chain, token = _asset_on(network, asset)
    address = address_checked(to_address)
    if DepositAddress.objects.annotate(low=Lower("address")).filter(low=address.lower()).exists():
        raise WithdrawalAddressError(
            _("This is a deposit address of this site: enter an address of your own wallet.")
        )
    try:
        units = token.to_units(amount_usd)
    except ValueError:
        raise WithdrawalAmountError(
            _("This amount cannot be sent in this token's units; choose a rounder amount.")
        ) from None
    key = f"withdrawal-request:{customer.pk}:{request_key}"
    with transaction.atomic():
        balance, pending = customer_account(customer), pending_account()
        locked = lock_accounts([balance, pending])
        existing = (
            LedgerTransaction.objects.filter(idempotency_key=key)
            .select_related("withdrawal")
            .first()
        )
        if existing is not None:
            earlier = existing.withdrawal
            same = earlier is not None and (
                earlier.customer_id,
                earlier.amount_usd,
                earlier.network,
                earlier.asset,
                earlier.to_address,
            ) == (customer.pk, amount_usd, chain.key, token.symbol, address)
            if not same:
                raise IdempotencyConflict()
            return earlier
        available = locked[balance.pk].balance
        if amount_usd > available:
            raise WithdrawalAmountError(
                gettext(
                    "Your balance is %(available)s USD: you can withdraw at most that. "
                    "Nothing was taken from it."
                )
                % {"available": usd_text(available)}
            )
        withdrawal = Withdrawal.objects.create(
            customer=customer,
            amount_usd=amount_usd,
            network=chain.key,
            chain_id=chain.chain_id,
            asset=token.symbol,
            token_address=token.token_address,
            decimals=token.decimals,
            amount_units=units,
            to_address=address,
            confirmations_required=chain.confirmations,
        )
        WithdrawalEvent.objects.create(
            withdrawal=withdrawal,
            to_status=WithdrawalStatus.REQUESTED,
            actor=customer,
            reason="Requested by the customer",
            data={"units": str(units)},
        )
        try:
            ledger_post(
                kind=TransactionKind.WITHDRAWAL_REQUEST,
                lines=[(balance, -amount_usd), (pending, amount_usd)],
                memo=f"Withdrawal {withdrawal.reference} requested: {amount_usd} USD as "
                f"{token.symbol} on {chain.key} to {address}",
                idempotency_key=key,
                actor=customer,
                withdrawal=withdrawal,
            )
        except InsufficientBalance as exc:  # only if the balance moved in between: it cannot
            raise WithdrawalAmountError(exc.message) from None
        # The first status is written here, with the row (the setter writes the others).
        withdrawal_status_emit(withdrawal)  # webhooks: withdrawal.requested
    transaction.on_commit(lambda: logger.info("withdrawal %s requested", withdrawal.reference))
    return withdrawal
