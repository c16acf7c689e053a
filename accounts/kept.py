"""Kept: a small map of rendered parts kept in a worker process, the least recently used
dropped first, safe when a process serves requests on several threads (`make run`'s
development server does).

The pages' kept parts use it (accounts.kept_layout, rental.order_page, payments' `{% kept %}`):
each is keyed on everything it shows, read fresh on every request, so an entry is never stale;
the size only bounds the memory.
"""

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any


class Kept:
    def __init__(self, size: int):
        self.size = size
        self._items: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        """The value kept for `key` (now the most recently used), or None."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: Hashable, value: Any) -> Any:
        """Keep `value` (not None) for `key`, dropping the least recently used past the size;
        returns `value`."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return value

    def clear(self, **kwargs) -> None:
        """Forget everything (a setting_changed receiver in tests: settings a part shows)."""
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
