"""An ORM query compiled once per process, run again with new values (`CompiledQuery`), and its
pages for a Paginator (`CompiledPages`).

Compiling the queries of a customer page (the logged-in user with their roles, the order with its
timeline, the payment with its money in the ledger and three related rows, the statement's
window and subqueries) costs a page more CPU than PostgreSQL takes to run them, on every request.
The query is built and compiled once, with stand-in values where the request's own go (ids), and
each request runs its SQL with the real values, reading the rows into model instances as the
ORM does (select_related's related rows, annotations, the expressions' converters): the same
statement and the same objects as the queryset would give. In `accounts`, the bottom app, so
that every app may use it.
"""

from collections.abc import Callable

from django.db import connections
from django.db.models import QuerySet
from django.db.models.query import get_related_populators


class CompiledQuery:
    """`queryset`'s statement, compiled now; `stand_ins` name the values (each one distinct
    from every other parameter of the statement) that `objects(**values)` replaces wherever
    they are."""

    def __init__(self, queryset: QuerySet, **stand_ins):
        self.db = queryset.db
        compiler = queryset.query.get_compiler(using=self.db)
        sql, params = compiler.as_sql()
        self.sql, self.params = sql, tuple(params)
        self.slots = {
            name: [index for index, param in enumerate(self.params) if param == value]
            for name, value in stand_ins.items()
        }
        for name, positions in self.slots.items():
            if not positions:
                raise ValueError(f"{name}: {stand_ins[name]!r} is no parameter of the statement")
        select, klass_info = compiler.select, compiler.klass_info
        self.converters = tuple(
            (position, tuple(functions), expression)
            for position, (functions, expression) in compiler.get_converters(
                [column[0] for column in select[: compiler.col_count]]
            ).items()
        )
        if klass_info is None:  # a values() or values_list() query: rows are read as tuples
            return
        self.model = klass_info["model"]
        fields = klass_info["select_fields"]
        self.start, self.end = fields[0], fields[-1] + 1
        self.init_list = [column[0].target.attname for column in select[self.start : self.end]]
        self.fetch_mode = queryset._fetch_mode
        self.klass_info, self.select = klass_info, select
        # Populators keep the objects they made only when the fetch mode tracks peers.
        self.populators = (
            None
            if self.fetch_mode.track_peers
            else get_related_populators(klass_info, select, self.db, self.fetch_mode)
        )
        self.annotations = tuple(compiler.annotation_col_map.items())

    def bound(self, values: dict) -> list:
        params = list(self.params)
        for name, value in values.items():
            for position in self.slots[name]:
                params[position] = value
        return params

    def rows(self, sql: str, params: list) -> list[list]:
        connection = connections[self.db]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            rows = cursor.fetchall()
        if not self.converters:
            return rows
        converted = []
        for row in rows:
            row = list(row)
            for position, functions, expression in self.converters:
                value = row[position]
                for function in functions:
                    value = function(value, expression, connection)
                row[position] = value
            converted.append(row)
        return converted

    def objects(self, *, suffix: str = "", suffix_params: tuple = (), **values) -> list:
        """The model instances of the rows (`suffix`: SQL after the statement, as a LIMIT)."""
        rows = self.rows(self.sql + suffix, [*self.bound(values), *suffix_params])
        populators = self.populators
        if populators is None:
            populators = get_related_populators(
                self.klass_info, self.select, self.db, self.fetch_mode
            )
        model, db, init_list, start, end = self.model, self.db, self.init_list, self.start, self.end
        objects = []
        for row in rows:
            obj = model.from_db(db, init_list, row[start:end], fetch_mode=self.fetch_mode)
            for populator in populators:
                populator.populate(row, obj)
            for name, position in self.annotations:
                setattr(obj, name, row[position])
            objects.append(obj)
        return objects

    def values(self, **values) -> list[tuple]:
        """The rows as tuples of their columns (converted), for a values_list() query."""
        return [tuple(row) for row in self.rows(self.sql, self.bound(values))]


class CompiledPages:
    """A compiled query's rows for a Paginator: `count` says how many there are (a callable,
    run once by the paginator), each page is the statement with LIMIT and OFFSET after its
    ORDER BY (where the queryset's slice puts them); an empty page runs no query."""

    ordered = True

    def __init__(self, query: CompiledQuery, *, count: Callable[[], int], **values):
        self.query, self.counted, self.values = query, count, values

    def count(self) -> int:
        return self.counted()

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, window: slice) -> list:
        start, stop = window.start or 0, window.stop
        if stop <= start:
            return []
        return self.query.objects(
            suffix=" LIMIT %s OFFSET %s", suffix_params=(stop - start, start), **self.values
        )
