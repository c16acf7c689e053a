"""The one way a withdrawal changes status, its errors, and the ledger accounts it moves.

`withdrawal_set_status` checks WITHDRAWAL_TRANSITIONS through WITHDRAWAL_STATES (the
statemachine helper), saves the status with the fields its rules set, writes the
WithdrawalEvent (who, why) and queues what follows after the commit. The caller holds the
withdrawal's row lock (payments.locks.lock_withdrawal, step 3a of the lock order: before the
ledger accounts its postings lock).
"""

import logging
import re
from decimal import Decimal

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from outbox.messages import enqueue
from rental.money import usd
from statemachine import StateMachine, Transition

from ...exceptions import PaymentError
from ...ledger.services.posting import system_account
from ...models import (
    WITHDRAWAL_TRANSITIONS,
    LedgerAccount,
    LedgerAccountKind,
    Withdrawal,
    WithdrawalEvent,
    WithdrawalStatus,
)
from .events import withdrawal_status_emit

logger = logging.getLogger(__name__)

ADDRESS_PATTERN = re.compile(r"0x[0-9a-fA-F]{40}")
TX_HASH_PATTERN = re.compile(r"0x[0-9a-fA-F]{64}")
ZERO_ADDRESS = "0x" + "0" * 40


class WithdrawalError(PaymentError):
    message = _("This withdrawal cannot be made.")


class InvalidWithdrawalTransition(WithdrawalError):
    message = _("This withdrawal cannot change to that status now; reload the page.")

    def __init__(self, from_status: str = "", to_status: str = ""):
        self.from_status, self.to_status = from_status, to_status
        super().__init__()

    def __str__(self) -> str:
        return f"withdrawal status {self.from_status!r} cannot become {self.to_status!r}"


class WithdrawalAmountError(WithdrawalError):
    """About the amount (the form shows it on the amount field)."""


class WithdrawalAddressError(WithdrawalError):
    """About the address (the form shows it on the address field)."""


class WithdrawalNetworkUnavailable(WithdrawalError):
    message = _("This asset and network are not available for withdrawals right now.")


class WithdrawalHashError(WithdrawalError):
    """About the transaction hash (the form shows it on the hash field)."""


class OwnWithdrawal(WithdrawalError):
    message = _("You cannot decide on your own withdrawal; ask another member of finance.")


def withdrawal_minimum() -> Decimal:
    return usd(settings.WITHDRAWAL_MIN_USD)


# ---------------------------------------------------------------------------- the one setter


def _describe(withdrawal: Withdrawal) -> tuple[str, dict]:
    return f"withdrawal {withdrawal.reference} ({withdrawal.amount_usd} USD)", {
        "withdrawal": withdrawal.reference,
        "amount_usd": str(withdrawal.amount_usd),
    }


def _follow(change: Transition) -> None:
    """What follows a change, after the commit: a sent withdrawal is checked on chain at once;
    the customer is told once, when it is paid or rejected."""

    if change.to_status == WithdrawalStatus.SENT:
        enqueue("payments.tasks.withdrawal_check", change.obj.pk)
    if change.to_status in (WithdrawalStatus.PAID, WithdrawalStatus.REJECTED):
        enqueue("payments.tasks.withdrawal_event_email", change.audit.pk)


def _emit(change: Transition) -> None:
    withdrawal_status_emit(change.obj)  # webhooks: withdrawal.<status>, in this transaction


# The withdrawal's states: WITHDRAWAL_TRANSITIONS, WithdrawalEvent as the audit row, the log
# line, the webhook event, the check and the email that follow.
WITHDRAWAL_STATES = StateMachine(
    name="withdrawal",
    transitions=WITHDRAWAL_TRANSITIONS,
    audit_model=WithdrawalEvent,
    refuse=lambda withdrawal, to: InvalidWithdrawalTransition(withdrawal.status, to),
    logger=logger,
    describe=_describe,
    effects=(_emit, _follow),
)


def can_change(from_status: str, to_status: str) -> bool:
    return WITHDRAWAL_STATES.allows(from_status, to_status)


def withdrawal_set_status(
    withdrawal: Withdrawal, to_status: str, *, actor: User | None, reason: str, **data
) -> Withdrawal:
    """Change the status of a withdrawal whose row the caller has locked.

    Checks WITHDRAWAL_TRANSITIONS (InvalidWithdrawalTransition otherwise), writes the fields
    that go with the new status, the WithdrawalEvent (acting user, reason, `data`) and, after
    the commit, the log line and what follows (a sent withdrawal is checked on chain at once).

    - approved, rejected: who decided and when; rejected: the reason as the rejection reason;
    - sent: `data["tx_hash"]` is the hash finance entered; the last check is cleared;
    - back to approved from sent: the hash is taken back;
    - paid: `data["block"]` is the block of the transfer; `paid_at` is now.
    """
    WITHDRAWAL_STATES.check(withdrawal, to_status)
    from_status = withdrawal.status
    now = timezone.now()
    fields: dict = {}
    if to_status in (WithdrawalStatus.APPROVED, WithdrawalStatus.REJECTED) and (
        from_status == WithdrawalStatus.REQUESTED or to_status == WithdrawalStatus.REJECTED
    ):
        fields |= {"decided_by": actor, "decided_at": now}
    if to_status == WithdrawalStatus.REJECTED:
        if not reason.strip():
            raise ValueError("a rejected withdrawal needs a reason")
        fields["reject_reason"] = reason.strip()[:500]
    cleared_check = {"check_detail": "", "checked_at": None, "block_number": None}
    if to_status == WithdrawalStatus.SENT:
        fields |= {"tx_hash": data["tx_hash"], **cleared_check}
    if from_status == WithdrawalStatus.SENT and to_status == WithdrawalStatus.APPROVED:
        data.setdefault("tx_hash", withdrawal.tx_hash)
        fields |= {"tx_hash": "", **cleared_check}
    if to_status == WithdrawalStatus.PAID:
        fields |= {"paid_at": now, "block_number": data["block"]}
    WITHDRAWAL_STATES.change(
        withdrawal,
        to_status=to_status,
        actor=actor,
        reason=reason,
        fields=fields,
        audit={"data": data},
    )
    return withdrawal


def pending_account() -> LedgerAccount:
    return system_account(LedgerAccountKind.WITHDRAWALS_PENDING)


def paid_account(withdrawal: Withdrawal) -> LedgerAccount:
    return system_account(
        LedgerAccountKind.WITHDRAWALS_PAID, asset=withdrawal.asset, network=withdrawal.network
    )
