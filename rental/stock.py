"""The stock version, and what is cached on it in each web process.

`rental_stockversion` holds one number that the database's triggers raise at the COMMIT of
every transaction that changed what the catalogue shows (migration 0011: GPU models, prices,
hosts' state and cards, allocations, orders holding lots), whoever wrote it. A value computed
after reading version v is at least as new as v, so caching it under v is never stale: the
next committed change moves the version and the next request misses.

Two things are not commits, and both are handled here:
- an unpaid order's hold ends at its `hold_until` without a write (rental/capacity.py): an
  entry says until when it holds (the earliest hold ending after it was built) and is not
  used after that;
- a transaction that has changed stock and not committed yet (a test's transaction, a view
  that writes then reads) sees its own changes: the triggers note it in a transaction-local
  setting, and `version()` then answers None (no cache).

Entries live in the process (no network round trip), for the current version only. On
databases other than PostgreSQL (no triggers) nothing is cached.
"""

import random
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Min
from django.utils import timezone

from .models import Order, OrderStatus, StockVersion

# Read with the version: whether this transaction changed stock itself (then its own reads are
# newer than any committed version). Plain SQL: nothing to compile per request.
_VERSION_SQL = (
    "SELECT value, current_setting('rental.stock_written', true) "
    "= txid_current_if_assigned()::text FROM rental_stockversion WHERE id = 1"
)

# Entries per process at one version: a handful of pages per language and audience, and the
# anonymous response per host; a host pattern in ALLOWED_HOSTS (".example.com") lets visitors
# name hosts without end, so past this nothing more is kept until the version moves.
MAX_ENTRIES = 64

_lock = threading.Lock()
_entries: dict[tuple, tuple[datetime | None, Any]] = {}
_entries_version: list[int | None] = [None]


def version() -> int | None:
    """The committed stock version, or None when nothing may be cached: not PostgreSQL, or
    this transaction changed stock and has not committed."""
    if connection.vendor != "postgresql":
        return None
    for _attempt in range(2):
        with connection.cursor() as cursor:
            cursor.execute(_VERSION_SQL)
            row = cursor.fetchone()
        if row is not None:
            value, written_here = row
            return None if written_here else value
        # The row is missing (a flushed database): start at a random value, so that entries
        # cached before the flush can never match the numbers after it.
        StockVersion.objects.get_or_create(id=1, defaults={"value": random.getrandbits(62)})  # noqa: S311
    return None


def holds_until() -> datetime | None:
    """When the first unpaid order's hold ends from now on (what the catalogue shows then
    changes without a write), or None."""
    return Order.objects.filter(
        status=OrderStatus.AWAITING_PAYMENT, hold_until__gt=timezone.now()
    ).aggregate(first=Min("hold_until"))["first"]


def cached(key: tuple, build: Callable[[], Any], stock_version: int | None) -> Any:
    """`build()`'s value for `key` at `stock_version` (from `version()`, read BEFORE anything
    `build` reads), built once per process and version; None: built every time."""
    if stock_version is None:
        return build()
    value = entry(key, stock_version)
    if value is not None:
        return value
    valid_until = holds_until()
    value = build()
    keep(key, value, stock_version, valid_until)
    return value


def entry(key: tuple, stock_version: int) -> Any:
    """What `keep` kept for `key` at `stock_version` and still holds now, or None."""
    found = _entries.get(key) if _entries_version[0] == stock_version else None
    if found is not None and (found[0] is None or timezone.now() < found[0]):
        return found[1]
    return None


def keep(key: tuple, value: Any, stock_version: int, valid_until: datetime | None) -> None:
    """Keep `value` (not None), built from what was read after `stock_version` (from
    `version()`) and after `valid_until` (from `holds_until()`), for `key`."""
    with _lock:
        if _entries_version[0] != stock_version:
            _entries.clear()
            _entries_version[0] = stock_version
        if key in _entries or len(_entries) < MAX_ENTRIES:
            _entries[key] = (valid_until, value)


def clear() -> None:
    """Forget every entry (tests that change the database's version row by hand)."""
    with _lock:
        _entries.clear()
        _entries_version[0] = None
