"""Streaming CSV downloads shared by the customer statement and the finance journal."""

import csv
from collections.abc import Iterable, Sequence

from django.http import StreamingHttpResponse


class _Echo:
    """csv.writer writes into this and we stream what it returns."""

    def write(self, value: str) -> str:
        return value


def text_cell(value: str) -> str:
    """A text cell a spreadsheet will not run as a formula (OWASP CSV injection)."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def csv_download(
    *, header: Sequence[str], rows: Iterable[Sequence[object]], filename: str
) -> StreamingHttpResponse:
    writer = csv.writer(_Echo())

    def lines():
        yield writer.writerow(header)
        for row in rows:
            yield writer.writerow(row)

    response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
