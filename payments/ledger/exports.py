"""The statement as CSV: one download for the balance page and the API (the same bytes)."""

from collections.abc import Iterable

from django.http import StreamingHttpResponse

from ..csv_export import csv_download, text_cell
from ..models import LedgerEntry

STATEMENT_CSV_HEADER = ["date", "kind", "memo", "order", "amount_usd", "running_balance_usd"]
STATEMENT_CSV_FILENAME = "balance-statement.csv"


def statement_csv(entries: Iterable[LedgerEntry]) -> StreamingHttpResponse:
    """Entries of payments.ledger.selectors.statement (with their running balances), oldest
    first as given, streamed as the statement's CSV download."""
    rows = (
        [
            entry.transaction.created_at.isoformat(),
            entry.transaction.kind,
            text_cell(entry.transaction.memo),
            entry.transaction.order.reference if entry.transaction.order else "",
            f"{entry.amount:.2f}",
            f"{entry.running_balance:.2f}",
        ]
        for entry in entries
    )
    return csv_download(header=STATEMENT_CSV_HEADER, rows=rows, filename=STATEMENT_CSV_FILENAME)
