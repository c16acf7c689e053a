"""One UPDATE (or INSERT) for many rows, each with its own values.

`update_rows` writes fields of model instances, `create_rows` inserts new instances (setting
their primary keys), `insert_rows` inserts plain value tuples (no model instance at all).

Django's bulk_update builds a CASE per field and row, and bulk_create a placeholder per value,
which costs more in Python than the database spends on the rows (a 500-row settlement spent
most of its time there). On PostgreSQL these helpers send the rows as ONE parameter, a JSON
array of rows, which the database unpacks and casts to the columns' types:

    UPDATE t SET f = v.f FROM (SELECT (r.v->>0)::bigint AS id, (r.v->>1)::numeric AS f
                               FROM jsonb_array_elements(%s::jsonb) WITH ORDINALITY AS r(v, n)
                               ORDER BY r.n) AS v
    WHERE t.id = v.id

(one array parameter per column, through unnest, costs more: the driver quotes every element
in Python). Elsewhere (the embedded SQLite default) they fall back to bulk_update and
bulk_create.

`any_of` does the same for the right-hand side of a long `__in`: Django compiles every value of
a list (20 ms for the 1,000 idempotency keys of one settlement) and the driver quotes each.
"""

import json
from collections.abc import Iterable, Sequence
from datetime import date, datetime, time
from decimal import Decimal

from django.db import connection
from django.db.models import Model
from django.db.models.expressions import RawSQL
from django.utils.functional import Promise

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
    sets = ", ".join(f"{quote(f.column)} = v.{quote(f.column)}" for f in columns[1:])
    table, pk = quote(meta.db_table), quote(meta.pk.column)
    sql = (
        f"UPDATE {table} AS t SET {sets} FROM ({_select_rows(columns)}) AS v"  # noqa: S608
        f" WHERE t.{pk} = v.{pk}"
    )
    attnames = [field.attname for field in columns]
    with connection.cursor() as cursor:
        for start in range(0, len(objs), BATCH):
            rows = [
                [getattr(obj, name) for name in attnames] for obj in objs[start : start + BATCH]
            ]
            cursor.execute(sql, [_dumps(rows)])


def insert_rows(
    model: type[Model],
    fields: Sequence[str],
    rows: Sequence[Sequence],
    *,
    ignore_conflicts: bool = False,
    upsert: tuple[Sequence[str], Sequence[str]] | None = None,
    returning: Sequence[str] = (),
) -> list[tuple]:
    """INSERT `rows` (tuples of plain values in `fields` order: str, int, Decimal, bool, aware
    datetime, None, a dict or list for a JSON field), one statement per BATCH rows, without a
    model instance per row. Every NOT NULL column without a database default must be among
    `fields`. `ignore_conflicts` skips rows a unique constraint already holds; `upsert` =
    (unique fields, fields to update) updates those instead. Returns the `returning` values of
    the rows written (on other databases than PostgreSQL: of every row given)."""
    if not rows:
        return []
    meta = model._meta
    columns = [meta.get_field(name) for name in fields]
    if connection.vendor != "postgresql":
        objs = [model(**{f.attname: v for f, v in zip(columns, row, strict=True)}) for row in rows]
        options: dict = {"ignore_conflicts": ignore_conflicts}
        if upsert:
            unique, update = upsert
            options = {"update_conflicts": True, "unique_fields": unique, "update_fields": update}
        model.objects.bulk_create(objs, batch_size=BATCH, **options)
        return [tuple(getattr(obj, meta.get_field(n).attname) for n in returning) for obj in objs]
    quote = connection.ops.quote_name
    names = ", ".join(quote(field.column) for field in columns)
    sql = f"INSERT INTO {quote(meta.db_table)} ({names}) {_select_rows(columns)}"  # noqa: S608
    if upsert:
        unique, update = upsert
        target = ", ".join(quote(meta.get_field(n).column) for n in unique)
        sets = ", ".join(
            f"{quote(meta.get_field(n).column)} = EXCLUDED.{quote(meta.get_field(n).column)}"
            for n in update
        )
        sql += f" ON CONFLICT ({target}) DO UPDATE SET {sets}"
    elif ignore_conflicts:
        sql += " ON CONFLICT DO NOTHING"
    if returning:
        sql += " RETURNING " + ", ".join(quote(meta.get_field(n).column) for n in returning)
    written: list[tuple] = []
    with connection.cursor() as cursor:
        for start in range(0, len(rows), BATCH):
            cursor.execute(sql, [_dumps(rows[start : start + BATCH])])
            if returning:
                written += cursor.fetchall()
    return written


def create_rows(objs: Sequence[Model]) -> list[Model]:
    """Model.objects.bulk_create(objs) for new instances of one model, in one statement per
    BATCH rows; each instance gets its primary key. (auto_now_add and defaults as bulk_create
    fills them; no signals, as bulk_create sends none.)"""
    if not objs:
        return []
    model = type(objs[0])
    if connection.vendor != "postgresql":
        return model.objects.bulk_create(objs, batch_size=BATCH)
    meta = model._meta
    columns = [field for field in meta.concrete_fields if field is not meta.auto_field]
    for obj in objs:
        obj._prepare_related_fields_for_save(operation_name="bulk_create")
    quote = connection.ops.quote_name
    names = ", ".join(quote(field.column) for field in columns)
    sql = (
        f"INSERT INTO {quote(meta.db_table)} ({names}) {_select_rows(columns)}"  # noqa: S608
        f" RETURNING {quote(meta.pk.column)}"
    )
    with connection.cursor() as cursor:
        for start in range(0, len(objs), BATCH):
            chunk = objs[start : start + BATCH]
            cursor.execute(
                sql, [_dumps([[f.pre_save(obj, True) for f in columns] for obj in chunk])]
            )
            # Rows come back in the order of the array (ORDER BY its ordinality).
            for obj, (pk,) in zip(chunk, cursor.fetchall(), strict=True):
                obj.pk = pk
                obj._state.adding, obj._state.db = False, connection.alias
    return list(objs)


def any_of(values: Iterable, *, cast: str = "") -> list | RawSQL:
    """Values for `field__in=any_of(values)`: on PostgreSQL ONE parameter (a JSON array,
    unpacked by the database; `cast` the column's type, e.g. "bigint", none for text),
    elsewhere the list itself."""
    if cast not in ("", "bigint"):
        raise ValueError(f"any_of casts to text or bigint, not {cast!r}")
    values = list(values)
    if connection.vendor != "postgresql" or not values:
        return values
    element = "jsonb_array_elements_text(%s::jsonb)"
    sql = f"SELECT ({element})::{cast}" if cast else f"SELECT {element}"
    return RawSQL(sql, [_dumps(values)])  # noqa: S611 - the values are its one parameter


def any_pk(values: Iterable[int]) -> list | RawSQL:
    """Primary keys (or foreign keys) for `pk__in=any_pk(ids)`: one parameter (any_of)."""
    return any_of(values, cast="bigint")


def _select_rows(columns) -> str:
    """SELECT each column, cast to its type, from the JSON array of rows (one parameter), in
    the array's order. A JSON field's None is SQL NULL, as Model.save writes it."""
    quote = connection.ops.quote_name
    values = ", ".join(
        f"NULLIF(r.v->{i}, 'null'::jsonb) AS {quote(field.column)}"
        if field.get_internal_type() == "JSONField"
        else f"(r.v->>{i})::{_base_type(field)} AS {quote(field.column)}"
        for i, field in enumerate(columns)
    )
    return (
        f"SELECT {values} FROM jsonb_array_elements(%s::jsonb)"  # noqa: S608
        " WITH ORDINALITY AS r(v, n) ORDER BY r.n"
    )


def _plain(value):
    """A value JSON cannot hold as such, as the text PostgreSQL reads it back from."""
    if isinstance(value, Decimal | Promise):
        return str(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} cannot be written by payments.bulk")


def _dumps(rows) -> str:
    return json.dumps(rows, default=_plain, separators=(",", ":"))


def _base_type(field) -> str:
    """The column's type without a length or precision (the values are cast to it)."""
    return field.db_type(connection).split("(")[0]
