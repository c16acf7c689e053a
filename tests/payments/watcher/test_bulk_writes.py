"""payments.bulk writes a scan's rows as one JSON parameter per statement: every value reads
back from PostgreSQL as it was given (big token amounts, cents, times, JSON, NULLs)."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.translation import gettext_lazy

from payments.bulk import create_rows, insert_rows, update_rows
from payments.models import (
    ChainBlock,
    ChainTransfer,
    CryptoPayment,
    PaymentEvent,
    PaymentEventKind,
    TransferStatus,
)

FIELDS = (
    "network",
    "chain_id",
    "tx_hash",
    "log_index",
    "block_number",
    "block_hash",
    "block_timestamp",
    "token_address",
    "from_address",
    "to_address",
    "amount_units",
    "payment",
    "status",
    "late",
    "receipted",
    "seen_at",
)
WHEN = datetime(2026, 3, 1, 12, 30, 45, 123456, tzinfo=UTC)


def transfer_row(n: int, payment_id=None, units=10**6):
    return (
        "local",
        31337,
        f"0x{n:064x}",
        n % 3,
        100 + n,
        f"0x{n + 7:064x}",
        WHEN,
        "0x" + "a" * 40,
        "0x" + "b" * 40,
        "0x" + "c" * 40,
        units,
        payment_id,
        TransferStatus.SEEN,
        n % 2 == 0,
        False,
        WHEN,
    )


def test_inserted_rows_read_back_as_given_and_a_repeated_row_is_skipped(chain, top_up_payment):
    payment = top_up_payment("10.00")
    huge = 2**255 + 12345  # a token amount no 64-bit integer holds
    rows = [transfer_row(1, payment.pk, huge), transfer_row(2), transfer_row(3, payment.pk)]
    with CaptureQueriesContext(connection) as queries:
        written = insert_rows(ChainTransfer, FIELDS, rows, returning=("tx_hash", "amount_units"))
    assert len(queries) == 1
    assert written == [(row[2], Decimal(row[10])) for row in rows]
    for row in rows:
        stored = ChainTransfer.objects.get(tx_hash=row[2])
        assert (
            stored.log_index,
            stored.block_number,
            stored.block_timestamp,
            stored.amount_units,
            stored.payment_id,
            stored.late,
            stored.seen_at,
        ) == (row[3], row[4], WHEN, Decimal(row[10]), row[11], row[13], WHEN)

    again = insert_rows(
        ChainTransfer,
        FIELDS,
        [transfer_row(2), transfer_row(4)],
        ignore_conflicts=True,
        returning=("tx_hash",),
    )
    assert again == [(f"0x{4:064x}",)]  # the one already stored is not written again
    assert ChainTransfer.objects.count() == 4


def test_an_upsert_replaces_the_stored_value(db):
    insert_rows(
        ChainBlock, ("network", "number", "hash"), [("local", 5, "0xold"), ("local", 6, "0xsix")]
    )
    insert_rows(
        ChainBlock,
        ("network", "number", "hash"),
        [("local", 5, "0xnew")],
        upsert=(("network", "number"), ("hash",)),
    )
    assert dict(ChainBlock.objects.values_list("number", "hash")) == {5: "0xnew", 6: "0xsix"}


def test_updated_fields_read_back_and_the_others_stay(chain, top_up_payment):
    first, second = top_up_payment("10.00"), top_up_payment("12.00")
    first.seen_units, first.receipted_usd, first.confirmed_at = 5 * 10**6, Decimal("4.99"), WHEN
    # A text column too (not the status: only its setter writes that, even through here).
    first.declared_tx_hash = "0x" + "ab" * 32
    second.seen_units, second.receipted_usd, second.confirmed_at = 0, Decimal("0.01"), None
    second.amount_due_usd = Decimal("999.00")  # changed in memory, not among the fields written
    update_rows(
        [first, second], ["seen_units", "receipted_usd", "confirmed_at", "declared_tx_hash"]
    )

    stored = {p.pk: p for p in CryptoPayment.objects.filter(pk__in=[first.pk, second.pk])}
    assert (stored[first.pk].seen_units, stored[first.pk].receipted_usd) == (
        5 * 10**6,
        Decimal("4.99"),
    )
    assert (stored[first.pk].confirmed_at, stored[first.pk].declared_tx_hash) == (
        WHEN,
        "0x" + "ab" * 32,
    )
    assert stored[second.pk].confirmed_at is None
    assert stored[second.pk].receipted_usd == Decimal("0.01")
    assert stored[second.pk].amount_due_usd == Decimal("12.00")


def test_created_instances_get_their_keys_in_order_with_their_values(chain, top_up_payment):
    payment = top_up_payment("10.00")
    events = [
        PaymentEvent(
            payment=payment,
            kind=PaymentEventKind.STATUS,
            reason=gettext_lazy("Transfer seen on chain"),
            data={"n": n, "note": "perché €", "nested": [1, None, {"a": True}]},
        )
        for n in range(3)
    ]
    created = create_rows(events)

    assert created == events and all(event.pk for event in events)
    assert [e.pk for e in events] == sorted(e.pk for e in events)
    for n, event in enumerate(events):
        stored = PaymentEvent.objects.get(pk=event.pk)
        assert stored.data == {"n": n, "note": "perché €", "nested": [1, None, {"a": True}]}
        assert stored.reason == "Transfer seen on chain"
        assert event.created_at is not None  # auto_now_add, as bulk_create fills it
        assert stored.created_at == event.created_at


def test_a_value_json_cannot_carry_is_refused_before_anything_is_written(chain, top_up_payment):
    payment = top_up_payment("10.00")
    before = PaymentEvent.objects.count()
    with pytest.raises(TypeError):
        create_rows([PaymentEvent(payment=payment, kind="status", data={"odd": {1, 2}})])
    assert PaymentEvent.objects.count() == before
