"""Running work at once on separate database connections, for lock and race tests."""

import threading
from concurrent.futures import ThreadPoolExecutor

from django.db import connection


def run_concurrently(work, count, workers=40):
    """`count` calls of work(i), up to `workers` at once, each on its own database connection."""
    start = threading.Barrier(min(count, workers))

    def call(index):
        try:
            if index < workers:
                start.wait(timeout=30)
            return work(index)
        except Exception as exc:  # noqa: BLE001 - every outcome is inspected
            return exc
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(call, range(count)))
