"""What the ledger tells the outbox (webhooks): money credited to a customer's balance.
Written in the transaction of the posting."""

from collections.abc import Sequence

from outbox import events
from outbox.services import outbox_emit_many
from rental.models import Order

from ...models import LedgerAccountKind


def balance_credited_emit(postings: Sequence, posted: Sequence) -> None:
    """One event per posted transaction that credits a customer's balance (top-up, credited
    payment, surplus, adjustment, reversal of a charge...)."""
    outbox_emit_many(
        (
            events.BALANCE_CREDITED,
            account.customer_id,
            {
                "credit": {
                    "ledger_transaction": txn.pk,
                    "kind": txn.kind,
                    "amount_usd": f"{amount:.2f}",
                    "currency": "USD",
                    "memo": txn.memo,
                    "order": {"id": txn.order_id, "reference": Order(pk=txn.order_id).reference}
                    if txn.order_id
                    else None,
                    "payment_id": txn.payment_id,
                }
            },
        )
        for txn, posting in zip(posted, postings, strict=True)
        for account, amount in posting.lines
        if account.kind == LedgerAccountKind.CUSTOMER_BALANCE and amount > 0
    )
