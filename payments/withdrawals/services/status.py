"""The one way a withdrawal changes status, its errors, and the ledger accounts it moves.

`withdrawal_set_status` checks WITHDRAWAL_TRANSITIONS, writes the WithdrawalEvent (who, why)
and queues what follows after the commit. The caller holds the withdrawal's row lock
(payments.locks.lock_withdrawal, step 3a of the lock order: before the ledger accounts its
postings lock).
"""

import logging
import re
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from rental.money import usd

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


def can_change(from_status: str, to_status: str) -> bool:
    return to_status in WITHDRAWAL_TRANSITIONS.get(from_status, frozenset())


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
    from_status = withdrawal.status
    if not can_change(from_status, to_status):
        raise InvalidWithdrawalTransition(from_status, to_status)
    now = timezone.now()
    fields = ["status", "updated_at"]
    if to_status in (WithdrawalStatus.APPROVED, WithdrawalStatus.REJECTED) and (
        from_status == WithdrawalStatus.REQUESTED or to_status == WithdrawalStatus.REJECTED
    ):
        withdrawal.decided_by, withdrawal.decided_at = actor, now
        fields += ["decided_by", "decided_at"]
    if to_status == WithdrawalStatus.REJECTED:
        if not reason.strip():
            raise ValueError("a rejected withdrawal needs a reason")
        withdrawal.reject_reason = reason.strip()[:500]
        fields.append("reject_reason")
    if to_status == WithdrawalStatus.SENT:
        withdrawal.tx_hash = data["tx_hash"]
        withdrawal.check_detail, withdrawal.checked_at, withdrawal.block_number = "", None, None
        fields += ["tx_hash", "check_detail", "checked_at", "block_number"]
    if from_status == WithdrawalStatus.SENT and to_status == WithdrawalStatus.APPROVED:
        data.setdefault("tx_hash", withdrawal.tx_hash)
        withdrawal.tx_hash = ""
        withdrawal.check_detail, withdrawal.checked_at, withdrawal.block_number = "", None, None
        fields += ["tx_hash", "check_detail", "checked_at", "block_number"]
    if to_status == WithdrawalStatus.PAID:
        withdrawal.paid_at, withdrawal.block_number = now, data["block"]
        fields += ["paid_at", "block_number"]
    withdrawal.status = to_status
    withdrawal.updated_at = now
    withdrawal.save(update_fields=fields)
    event = WithdrawalEvent.objects.create(
        withdrawal=withdrawal,
        from_status=from_status,
        to_status=to_status,
        actor=actor,
        reason=reason[:500],
        data=data,
    )
    transaction.on_commit(lambda: _log(withdrawal, event))
    from .. import tasks

    if to_status == WithdrawalStatus.SENT:
        tasks.withdrawal_check.delay_on_commit(withdrawal.pk)
    if to_status in (WithdrawalStatus.PAID, WithdrawalStatus.REJECTED):
        tasks.withdrawal_event_email.delay_on_commit(event.pk)  # the customer is told once
    return withdrawal


def _log(withdrawal: Withdrawal, event: WithdrawalEvent) -> None:
    logger.info(
        "withdrawal %s %s -> %s (%s USD): %s",
        withdrawal.reference,
        event.from_status or "-",
        event.to_status,
        withdrawal.amount_usd,
        event.reason or "-",
        extra={
            "event": "withdrawal_status",
            "withdrawal": withdrawal.reference,
            "from_status": event.from_status,
            "to_status": event.to_status,
            "amount_usd": str(withdrawal.amount_usd),
            "actor_id": event.actor_id,
        },
    )


def pending_account() -> LedgerAccount:
    return system_account(LedgerAccountKind.WITHDRAWALS_PENDING)


def paid_account(withdrawal: Withdrawal) -> LedgerAccount:
    return system_account(
        LedgerAccountKind.WITHDRAWALS_PAID, asset=withdrawal.asset, network=withdrawal.network
    )
