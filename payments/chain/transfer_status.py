"""The one way a chain transfer changes status, in batches (storing and confirming write
hundreds of transfers at once).

TRANSFER_STATES checks CHAIN_TRANSFER_TRANSITIONS (payments.models); `transfers_set_status`
checks every change of a batch before it applies any, then writes them in one UPDATE, with the
other columns the caller changed on these transfers.

No audit row: a transfer's changes are already told, in the same transaction, by its
payment's history (PaymentEvent: seen in a block, dropped by a reorganisation, confirmed into
the ledger, reversed), and a transfer to no payment's address has no history to keep beyond
the chain itself. No log line either: the scan logs what it stored and confirmed.

The caller serialises the writes: confirming holds the transfers' row locks
(payments.locks.lock_transfers), storing its network's scan lease and the payments' locks.
"""

from collections.abc import Sequence

from django.utils import timezone

from statemachine import StateMachine

from ..bulk import update_rows
from ..exceptions import PaymentError
from ..models import CHAIN_TRANSFER_TRANSITIONS, ChainTransfer, TransferStatus


class InvalidTransferTransition(PaymentError):
    def __init__(self, from_status: str = "", to_status: str = ""):
        self.from_status, self.to_status = from_status, to_status
        super().__init__()

    def __str__(self) -> str:
        return f"chain transfer status {self.from_status!r} cannot become {self.to_status!r}"


TRANSFER_STATES = StateMachine(
    name="chain_transfer",
    transitions=CHAIN_TRANSFER_TRANSITIONS,
    audit_model=None,  # told by the payment's events (above)
    refuse=lambda transfer, to: InvalidTransferTransition(transfer.status, to),
    touch=(),
)


def transfers_set_status(
    changes: Sequence[tuple[ChainTransfer, str]], *, also_fields: Sequence[str] = ()
) -> None:
    """Move each transfer to its new status and write them all, with `also_fields`, in one
    statement; InvalidTransferTransition (nothing applied) when the map refuses one. A
    confirmed transfer gets its confirmation time."""
    for transfer, to_status in changes:
        TRANSFER_STATES.check(transfer, to_status)
    if not changes:
        return
    now = timezone.now()
    fields = ["status", *also_fields]
    for transfer, to_status in changes:
        transfer.status = to_status
        if to_status == TransferStatus.CONFIRMED:
            transfer.confirmed_at = now
    if any(to_status == TransferStatus.CONFIRMED for _, to_status in changes):
        fields.append("confirmed_at")
    update_rows([transfer for transfer, _ in changes], list(dict.fromkeys(fields)))
