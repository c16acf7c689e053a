"""A statement's rows as model instances, with the ORM's per-statement work done once.

`Model.objects.raw(sql, params)` works out, on every query, which column goes to which field,
which converters apply to them and how to build the instances (RawModelIterable); for the few
statements every request of a logged-in customer runs (the user with their roles, the order
with its timeline), that cost more than PostgreSQL takes to run them. `RawStatement` runs its
first query through `raw()` and keeps that plan, per connection, for the same SQL (its columns
cannot change); the rows of later queries become the same instances `raw()` would build.
"""

import weakref
from dataclasses import dataclass
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model


@dataclass(frozen=True, slots=True)
class _Plan:
    init_names: list[str]
    init_positions: list[int]
    annotations: list[tuple[str, int]]
    converters: list[tuple[int, tuple]]  # (position, (functions, expression))
    from_db: Any
    track_peers: bool


class RawStatement:
    def __init__(self, model: type[Model], sql: str):
        self.model, self.sql = model, sql
        self._plans: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def instances(self, params: list) -> list[Model]:
        """The rows for `params`, as `model.objects.raw(sql, params)` would give them."""
        connection = connections[DEFAULT_DB_ALIAS]
        plan = self._plans.get(connection)
        if plan is None:
            queryset = self.model._default_manager.raw(self.sql, params)
            found = list(queryset)  # runs the query: its columns are known now
            self._plans[connection] = self._plan(queryset, connection)
            return found
        with connection.cursor() as cursor:
            cursor.execute(self.sql, params)
            rows = cursor.fetchall()
        found, peers = [], []
        for row in rows:
            if plan.converters:
                row = list(row)
                for position, (functions, expression) in plan.converters:
                    value = row[position]
                    for function in functions:
                        value = function(value, expression, connection)
                    row[position] = value
            instance = plan.from_db(
                DEFAULT_DB_ALIAS, plan.init_names, [row[p] for p in plan.init_positions]
            )
            if plan.track_peers:
                peers.append(weakref.ref(instance))
                instance._state.peers = peers
            for column, position in plan.annotations:
                setattr(instance, column, row[position])
            found.append(instance)
        return found

    def _plan(self, queryset, connection) -> _Plan:
        """What RawModelIterable works out for every query (django.db.models.query)."""
        from django.db.models.query import _get_from_db

        init_names, init_positions, annotations = queryset.resolve_model_init_order()
        fields = [queryset.model_fields.get(column) for column in queryset.columns]
        columns = [field.get_col(field.model._meta.db_table) if field else None for field in fields]
        compiler = connection.ops.compiler("SQLCompiler")(queryset.query, connection, queryset.db)
        if compiler.has_composite_fields(columns):
            raise ValueError("RawStatement: composite fields are not supported")
        fetch_mode = queryset._fetch_mode
        return _Plan(
            init_names=init_names,
            init_positions=init_positions,
            annotations=annotations,
            converters=list(compiler.get_converters(columns).items()),
            from_db=_get_from_db(queryset.model, fetch_mode),
            track_peers=fetch_mode.track_peers,
        )
