"""Finance decides on a withdrawal and enters the hash of the transfer it sent; nobody
decides on their own withdrawal."""

from django.db import IntegrityError, transaction
from django.db.models.functions import Lower
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.models import User

from ...chain.networks import get_network
from ...chain.withdrawal_check import (
    CheckResult,
    withdrawal_transfer_judge,
    withdrawal_transfer_read,
)
from ...ledger.services.posting import customer_account, ledger_post
from ...locks import lock_withdrawal
from ...models import TransactionKind, Withdrawal, WithdrawalStatus
from .status import (
    TX_HASH_PATTERN,
    OwnWithdrawal,
    WithdrawalError,
    WithdrawalHashError,
    pending_account,
    withdrawal_set_status,
)


def _check_decider(withdrawal: Withdrawal, actor: User) -> None:
    if withdrawal.customer_id == actor.pk:
        raise OwnWithdrawal()


# What the sent transaction carries when money has left for the customer's address: a sent
# withdrawal is then never rejected (the amount would be paid twice), and its hash is never
# taken back unless the transfer fell short (finance may then send the whole amount anew).
MONEY_LEFT = frozenset({CheckResult.CONFIRMING, CheckResult.PAID, CheckResult.SHORT_AMOUNT})
TRANSFER_ON_ITS_WAY = frozenset({CheckResult.CONFIRMING, CheckResult.PAID})


def _chain_result(withdrawal_id: int) -> tuple[str, str] | None:
    """For a sent withdrawal, what its transaction carries on chain now: (result, hash), read
    holding no lock; None when it is not sent. WithdrawalError when the node cannot say."""
    # Here, not at the top: the chain's client (requests, urllib3) is for the checks, not for
    # the withdrawal pages that import this module (issue 24: a web worker's memory).
    from ...chain.rpc import RpcError

    seen = Withdrawal.objects.filter(pk=withdrawal_id).first()
    if seen is None or seen.status != WithdrawalStatus.SENT:
        return None
    try:
        found = withdrawal_transfer_read(get_network(seen.network), seen.tx_hash)
    except (RpcError, KeyError):
        raise WithdrawalError(
            _(
                "The chain cannot be read right now, so nobody can tell whether this "
                "transaction already paid the customer: try again in a minute."
            )
        ) from None
    verdict = withdrawal_transfer_judge(
        found,
        token_address=seen.token_address,
        to_address=seen.to_address,
        amount_units=int(seen.amount_units),
        decimals=seen.decimals,
        confirmations_required=seen.confirmations_required,
    )
    return verdict.code, seen.tx_hash


def _refuse_if_money_left(withdrawal: Withdrawal, chain: tuple[str, str] | None, refused):
    """Under the lock: the chain's answer still describes this withdrawal's hash, and refuses
    when money has left for the customer (the `refused` result codes)."""
    if withdrawal.status != WithdrawalStatus.SENT:
        return
    if chain is None or chain[1] != withdrawal.tx_hash:
        raise WithdrawalError(_("This withdrawal changed meanwhile; reload the page."))
    if chain[0] in refused:
        raise WithdrawalError(
            _(
                "Its transaction already carries a transfer of this token to the customer's "
                "address: money has left, so it can no longer be rejected or its hash taken "
                "back. Wait for the confirmations."
            )
        )


def withdrawal_approve(*, withdrawal_id: int, actor: User) -> Withdrawal:
    """Finance approves a requested withdrawal (the second factor is checked by the form)."""
    with transaction.atomic():
        withdrawal = lock_withdrawal(withdrawal_id=withdrawal_id)
        _check_decider(withdrawal, actor)
        return withdrawal_set_status(
            withdrawal, WithdrawalStatus.APPROVED, actor=actor, reason="Approved by finance"
        )


def withdrawal_reject(*, withdrawal_id: int, actor: User, reason: str) -> Withdrawal:
    """Finance rejects a withdrawal that has not been paid, with a reason: WITHDRAWAL_RETURN
    gives the amount back to the customer's balance, in the same transaction. A sent one is
    first looked up on chain (no lock held): refused when its transaction already carries a
    transfer of the token to the address, even unconfirmed or short (paid twice otherwise)."""
    if not reason.strip():
        raise WithdrawalError(_("Give the reason for the rejection: the customer sees it."))
    chain = _chain_result(withdrawal_id)  # a sent one: has its transaction paid already?
    with transaction.atomic():
        withdrawal = lock_withdrawal(withdrawal_id=withdrawal_id)
        _check_decider(withdrawal, actor)
        _refuse_if_money_left(withdrawal, chain, MONEY_LEFT)
        withdrawal_set_status(withdrawal, WithdrawalStatus.REJECTED, actor=actor, reason=reason)
        amount = withdrawal.amount_usd
        ledger_post(
            kind=TransactionKind.WITHDRAWAL_RETURN,
            lines=[(pending_account(), -amount), (customer_account(withdrawal.customer), amount)],
            memo=f"Withdrawal {withdrawal.reference} rejected, returned to the balance: "
            f"{reason.strip()}",
            idempotency_key=f"withdrawal-return:{withdrawal.pk}",
            actor=actor,
            withdrawal=withdrawal,
        )
    return withdrawal


HASH_MESSAGE = _("A transaction hash is 0x followed by 64 hexadecimal characters (0-9, a-f).")


def withdrawal_enter_hash(*, withdrawal_id: int, actor: User, tx_hash: str) -> Withdrawal:
    """Finance sent the approved withdrawal from its wallet: record the transaction's hash
    (approved → sent) and have the worker check it on chain after the commit. A hash already
    entered for another withdrawal is refused (constraint withdrawal_hash_used_once)."""
    if not isinstance(tx_hash, str) or not TX_HASH_PATTERN.fullmatch(tx_hash):
        raise WithdrawalHashError(HASH_MESSAGE)
    tx_hash = tx_hash.lower()
    try:
        with transaction.atomic():
            withdrawal = lock_withdrawal(withdrawal_id=withdrawal_id)
            _check_decider(withdrawal, actor)
            if withdrawal.status == WithdrawalStatus.SENT and withdrawal.tx_hash == tx_hash:
                return withdrawal  # the same form sent twice
            return withdrawal_set_status(
                withdrawal,
                WithdrawalStatus.SENT,
                actor=actor,
                reason="Sent by finance",
                tx_hash=tx_hash,
            )
    except IntegrityError as exc:
        if "withdrawal_hash_used_once" not in str(exc):
            raise
        other = (
            Withdrawal.objects.annotate(low=Lower("tx_hash"))
            .filter(
                low=tx_hash,
                chain_id=Withdrawal.objects.filter(pk=withdrawal_id).values("chain_id")[:1],
            )
            .exclude(pk=withdrawal_id)
            .first()
        )
        raise WithdrawalHashError(
            gettext(
                "This transaction hash is already entered for withdrawal %(reference)s: "
                "one transaction pays one withdrawal."
            )
            % {"reference": other.reference if other else "?"}
        ) from None


def withdrawal_take_hash_back(*, withdrawal_id: int, actor: User, reason: str) -> Withdrawal:
    """Finance entered a wrong hash: back to approved (sent → approved), with a reason.
    Refused when that transaction carries the whole transfer (confirming or confirmed)."""
    if not reason.strip():
        raise WithdrawalError(_("Say why the hash is taken back: it is kept in the history."))
    chain = _chain_result(withdrawal_id)
    with transaction.atomic():
        withdrawal = lock_withdrawal(withdrawal_id=withdrawal_id)
        _check_decider(withdrawal, actor)
        _refuse_if_money_left(withdrawal, chain, TRANSFER_ON_ITS_WAY)
        return withdrawal_set_status(
            withdrawal, WithdrawalStatus.APPROVED, actor=actor, reason=reason.strip()
        )
