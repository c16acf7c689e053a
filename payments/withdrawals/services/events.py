"""What withdrawals tell the outbox (webhooks): one event per status a withdrawal reaches
(requested, approved, sent, paid, rejected), written in the transaction of the change: by
`withdrawal_request` for the first, by the one setter `withdrawal_set_status` for the others.
The payload's `status` is the withdrawal's status, as the REST API shows it."""

from outbox import events
from outbox.services import outbox_emit

from ...models import Withdrawal, WithdrawalStatus

# status reached → event type
STATUS_EVENTS = {
    WithdrawalStatus.REQUESTED: events.WITHDRAWAL_REQUESTED,
    WithdrawalStatus.APPROVED: events.WITHDRAWAL_APPROVED,
    WithdrawalStatus.SENT: events.WITHDRAWAL_SENT,
    WithdrawalStatus.PAID: events.WITHDRAWAL_PAID,
    WithdrawalStatus.REJECTED: events.WITHDRAWAL_REJECTED,
}


def _time(value) -> str | None:
    return value.isoformat() if value else None


def withdrawal_data(withdrawal: Withdrawal) -> dict:
    return {
        "id": withdrawal.pk,
        "reference": withdrawal.reference,
        "status": withdrawal.status,
        "amount_usd": f"{withdrawal.amount_usd:.2f}",
        "currency": "USD",
        "asset": withdrawal.asset,
        "network": withdrawal.network,
        "amount_units": str(int(withdrawal.amount_units)),
        "decimals": withdrawal.decimals,
        "to_address": withdrawal.to_address,
        "tx_hash": withdrawal.tx_hash,
        "reject_reason": withdrawal.reject_reason,
        "requested_at": _time(withdrawal.created_at),
        "paid_at": _time(withdrawal.paid_at),
    }


def withdrawal_status_emit(withdrawal: Withdrawal) -> None:
    """The event of the status the withdrawal just reached."""
    outbox_emit(
        event_type=STATUS_EVENTS[withdrawal.status],
        account=withdrawal.customer_id,
        payload={"withdrawal": withdrawal_data(withdrawal)},
    )
