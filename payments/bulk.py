"""One UPDATE for many rows, each with its own values.

Django's bulk_update builds a CASE per field and row, which costs more in Python than the
database spends on it (a 500-row settlement spent most of its time there). On PostgreSQL
this writes `UPDATE t SET f = v.f FROM unnest(<one array per column>) v WHERE t.pk = v.pk`;
elsewhere (the embedded SQLite default) it falls back to bulk_update.
"""

from collections.abc import Sequence

from django.db import connection
from django.db.models import Model

BATCH = 5000


def update_rows(objs: Sequence[Model], fields: Sequence[str]) -> None:
    """Write `fields` of these model instances (one model) in one statement per BATCH rows."""
    if not objs:
        return
    model = type(objs[0])
    if connection.vendor != "postgresql":
        model.objects.bulk_update(objs, fields, batch_size=BATCH)
        return
    meta = model._meta
    columns = [meta.pk, *(meta.get_field(name) for name in fields)]
    quote = connection.ops.quote_name
    # One array parameter per column (unnest), not one parameter per value: the statement
    # stays short whatever the number of rows.
    arrays = ", ".join(f"%s::{_base_type(field)}[]" for field in columns)
    names = ", ".join(quote(field.column) for field in columns)
    sets = ", ".join(f"{quote(f.column)} = v.{quote(f.column)}" for f in columns[1:])
    table, pk = quote(meta.db_table), quote(meta.pk.column)
    sql = (
        f"UPDATE {table} AS t SET {sets} FROM unnest({arrays}) AS v({names})"  # noqa: S608
        f" WHERE t.{pk} = v.{pk}"
    )
    with connection.cursor() as cursor:
        for start in range(0, len(objs), BATCH):
            chunk = objs[start : start + BATCH]
            cursor.execute(
                sql,
                [
                    [
                        field.get_db_prep_save(getattr(obj, field.attname), connection)
                        for obj in chunk
                    ]
                    for field in columns
                ],
            )


def _base_type(field) -> str:
    """The column's type without a length or precision (arrays are cast to it)."""
    return field.db_type(connection).split("(")[0]
