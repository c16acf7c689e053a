"""Reading finance's transfer of a withdrawal from the chain, and judging it.

`withdrawal_transfer_read` asks the node (no database, no lock) for the transaction's receipt
and the head; `withdrawal_transfer_judge` decides, from those alone, whether the transaction
pays the withdrawal: it succeeded, it carries an ERC-20 Transfer log of the withdrawal's token
contract to the withdrawal's address for at least the amount, and it has the confirmations the
network's payments need (payments.chain.networks.confirmations_at). Anything else is a reason, shown
to finance and the customer while the withdrawal stays sent.
"""

from dataclasses import dataclass, field
from decimal import Decimal

from django.utils.translation import gettext_lazy as _

from .networks import Network, confirmations_at

# .rpc (and with it requests and urllib3) is imported where a check runs: the finance and
# withdrawal pages import this module for its names and messages only (issue 24: web workers
# import what pages use).

# The data "kind" of a WithdrawalEvent that records a check (a status change has none).
CHECK_EVENT = "check"


class CheckResult:
    """What one look at the chain found (the `result` code of a check's WithdrawalEvent)."""

    NOT_FOUND = "not_found"
    FAILED = "failed"
    NO_TRANSFER = "no_transfer"
    OTHER_TOKEN = "other_token"
    OTHER_ADDRESS = "other_address"
    SHORT_AMOUNT = "short_amount"
    CONFIRMING = "confirming"
    PAID = "paid"


# The reason of each result, with the parameters the check stores beside its code.
CHECK_MESSAGES = {
    CheckResult.NOT_FOUND: _("no such transaction yet"),
    CheckResult.FAILED: _("transaction failed"),
    CheckResult.NO_TRANSFER: _("the transaction carries no token transfer"),
    CheckResult.OTHER_TOKEN: _("the transfer is of another token"),
    CheckResult.OTHER_ADDRESS: _("sent to another address"),
    CheckResult.SHORT_AMOUNT: _("amount %(sent)s is less than %(due)s"),
    CheckResult.CONFIRMING: _("%(confirmations)s of %(required)s confirmations"),
    CheckResult.PAID: _("paid with %(confirmations)s confirmations (%(required)s required)"),
}


def check_message(code: str, params: dict | None = None) -> str:
    """The reason of a check in the active language ("" for an unknown code)."""
    message = CHECK_MESSAGES.get(code)
    if message is None:
        return ""
    try:
        return str(message) % (params or {})
    except (KeyError, TypeError, ValueError):
        return str(message)


def token_text(units: int, decimals: int) -> str:
    """Base units as a plain token amount: two decimals when they say it all ("4.00"), every
    significant one otherwise ("4.000001")."""
    value = Decimal(int(units)).scaleb(-decimals)
    cents = value.quantize(Decimal("0.01"))
    return f"{cents:f}" if cents == value else f"{value.normalize():f}"


@dataclass(frozen=True, slots=True)
class TransferOnChain:
    """The node's answer about one transaction: its receipt (None when unknown) and the head."""

    receipt: dict | None
    head: int


@dataclass(frozen=True, slots=True)
class Verdict:
    code: str
    params: dict = field(default_factory=dict)
    block_number: int | None = None

    @property
    def paid(self) -> bool:
        return self.code == CheckResult.PAID


def withdrawal_transfer_read(network: Network, tx_hash: str) -> TransferOnChain:
    """The receipt of `tx_hash` and the head block, in one JSON-RPC batch. RpcError when the
    node does not answer (the task retries)."""
    from .rpc import ChainClient, RpcError

    client = ChainClient(network)
    receipt, head = client.batch(
        [("eth_getTransactionReceipt", [tx_hash]), ("eth_blockNumber", [])]
    )
    if head is None:
        raise RpcError("the node did not say its head block")
    if receipt is not None and not isinstance(receipt, dict):
        raise RpcError("unexpected answer to eth_getTransactionReceipt")
    return TransferOnChain(receipt=receipt, head=int(head, 16) if isinstance(head, str) else head)


def _quantity(value) -> int | None:
    if value is None:
        return None
    return int(value, 16) if isinstance(value, str) else int(value)


def withdrawal_transfer_judge(
    found: TransferOnChain,
    *,
    token_address: str,
    to_address: str,
    amount_units: int,
    decimals: int,
    confirmations_required: int,
) -> Verdict:
    """Whether the transaction pays the withdrawal; the first reason it does not otherwise."""
    from .rpc import parse_transfer

    receipt = found.receipt
    if not receipt or receipt.get("blockNumber") is None:
        return Verdict(CheckResult.NOT_FOUND)
    block = _quantity(receipt["blockNumber"])
    if _quantity(receipt.get("status")) != 1:
        return Verdict(CheckResult.FAILED, block_number=block)
    transfers = [t for log in receipt.get("logs") or [] if (t := parse_transfer(log)) is not None]
    if not transfers:
        return Verdict(CheckResult.NO_TRANSFER, block_number=block)
    of_token = [t for t in transfers if t.token_address == token_address.lower()]
    if not of_token:
        return Verdict(CheckResult.OTHER_TOKEN, block_number=block)
    to_them = [t for t in of_token if t.to_address == to_address.lower()]
    if not to_them:
        return Verdict(CheckResult.OTHER_ADDRESS, block_number=block)
    sent = sum(t.amount_units for t in to_them)
    if sent < amount_units:
        params = {"sent": token_text(sent, decimals), "due": token_text(amount_units, decimals)}
        return Verdict(CheckResult.SHORT_AMOUNT, {**params, "sent_units": str(sent)}, block)
    confirmations = confirmations_at(head=found.head, block_number=block)
    params = {"confirmations": confirmations, "required": confirmations_required}
    if confirmations < confirmations_required:
        return Verdict(CheckResult.CONFIRMING, params, block)
    return Verdict(CheckResult.PAID, {**params, "sent_units": str(sent)}, block)
