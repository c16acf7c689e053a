"""The worker's check of a sent withdrawal's transaction on chain: read the chain holding no
lock, then act under the withdrawal's lock on what it found."""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from outbox.messages import enqueue

from ...chain.networks import get_network
from ...chain.withdrawal_check import (
    CHECK_EVENT,
    Verdict,
    check_message,
    withdrawal_transfer_judge,
    withdrawal_transfer_read,
)
from ...ledger.services.posting import ledger_post
from ...locks import lock_withdrawal
from ...models import TransactionKind, Withdrawal, WithdrawalEvent, WithdrawalStatus
from .status import WithdrawalError, paid_account, pending_account, withdrawal_set_status


def withdrawal_check(*, withdrawal_id: int) -> str:
    """Look at the sent withdrawal's transaction on chain and act on what is there; returns
    the result (a CheckResult code, or "" when the withdrawal is no longer sent).

    The chain is read first, holding no lock (payments.chain.withdrawal_check); then the
    withdrawal is locked and, if it is still sent with the same hash, marked paid (with
    WITHDRAWAL_PAID: pending → withdrawals paid of its asset and network) or left sent with
    the reason in `check_detail` and a check event when the result changed. RpcError when
    the node does not answer (the task retries).
    """
    seen = Withdrawal.objects.filter(pk=withdrawal_id).first()
    if seen is None or seen.status != WithdrawalStatus.SENT:
        return ""
    found = withdrawal_transfer_read(get_network(seen.network), seen.tx_hash)
    verdict = withdrawal_transfer_judge(
        found,
        token_address=seen.token_address,
        to_address=seen.to_address,
        amount_units=int(seen.amount_units),
        decimals=seen.decimals,
        confirmations_required=seen.confirmations_required,
    )
    with transaction.atomic():
        withdrawal = lock_withdrawal(withdrawal_id=withdrawal_id)
        if withdrawal.status != WithdrawalStatus.SENT or withdrawal.tx_hash != seen.tx_hash:
            return ""  # finance took the hash back, or another check paid it meanwhile
        if verdict.paid:
            _mark_paid(withdrawal, verdict)
        else:
            _record_check(withdrawal, verdict)
    return verdict.code


def _check_data(verdict: Verdict, tx_hash: str) -> dict:
    return {
        "kind": CHECK_EVENT,
        "result": verdict.code,
        "params": verdict.params,
        "block": verdict.block_number,
        "tx_hash": tx_hash,
    }


def _english(verdict: Verdict) -> str:
    from django.utils import translation

    with translation.override("en"):
        return check_message(verdict.code, verdict.params)


def _mark_paid(withdrawal: Withdrawal, verdict: Verdict) -> None:
    detail = _english(verdict)
    withdrawal.check_detail, withdrawal.checked_at = detail, timezone.now()
    withdrawal.save(update_fields=["check_detail", "checked_at"])
    data = _check_data(verdict, withdrawal.tx_hash)
    withdrawal_set_status(
        withdrawal, WithdrawalStatus.PAID, actor=None, reason=f"Checked on chain: {detail}", **data
    )
    amount = withdrawal.amount_usd
    ledger_post(
        kind=TransactionKind.WITHDRAWAL_PAID,
        lines=[(pending_account(), -amount), (paid_account(withdrawal), amount)],
        memo=f"Withdrawal {withdrawal.reference} paid: {amount} USD as {withdrawal.asset} on "
        f"{withdrawal.network} to {withdrawal.to_address}, transaction {withdrawal.tx_hash}",
        idempotency_key=f"withdrawal-paid:{withdrawal.pk}",
        withdrawal=withdrawal,
    )


def _record_check(withdrawal: Withdrawal, verdict: Verdict) -> None:
    """Still sent: the reason on the withdrawal; a check event when the result is not the
    last one's (a transaction gaining confirmations writes one event, not one per look)."""
    withdrawal.check_detail, withdrawal.checked_at = _english(verdict), timezone.now()
    withdrawal.save(update_fields=["check_detail", "checked_at", "updated_at"])
    last = (
        WithdrawalEvent.objects.filter(withdrawal=withdrawal, data__kind=CHECK_EVENT)
        .order_by("-pk")
        .values_list("data", flat=True)
        .first()
    )
    if last and last.get("result") == verdict.code and last.get("tx_hash") == withdrawal.tx_hash:
        return
    WithdrawalEvent.objects.create(
        withdrawal=withdrawal,
        actor=None,
        reason=withdrawal.check_detail,
        data=_check_data(verdict, withdrawal.tx_hash),
    )


def withdrawal_check_soon(*, withdrawal_id: int) -> None:
    """Finance asks the worker to look at a sent withdrawal's transaction now (after the
    commit). Withdrawal.DoesNotExist; WithdrawalError when it is not sent."""
    status = Withdrawal.objects.values_list("status", flat=True).get(pk=withdrawal_id)
    if status != WithdrawalStatus.SENT:
        raise WithdrawalError(_("Only a sent withdrawal is checked on chain."))

    enqueue("payments.tasks.withdrawal_check", withdrawal_id)


def withdrawals_to_check() -> list[int]:
    """The sent withdrawals, oldest first: the periodic sweep checks each one."""
    return list(
        Withdrawal.objects.filter(status=WithdrawalStatus.SENT)
        .order_by("updated_at", "pk")
        .values_list("pk", flat=True)
    )
