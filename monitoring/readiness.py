"""What /readyz checks: the database, the cache, the broker, the static files (collected, where
the storage serves them from a manifest: without them every page is a 500), and each enabled
network's watcher (scanned within WATCHER_MAX_SCAN_AGE_SECONDS, at most WATCHER_MAX_LAG_BLOCKS
behind the head). Each check answers a short status word; nothing else leaves the process (no URL,
no error text), since the endpoint needs no login."""

import logging
import uuid

from django.core.cache import cache
from django.db import connection

from .queues import broker_reachable
from .redact import describe_error
from .selectors import networks_health

logger = logging.getLogger(__name__)

OK = "ok"
FAILING = "failing"
UNKNOWN = "unknown"
BROKER_TIMEOUT_SECONDS = 2


def _check(name: str, probe) -> str:
    try:
        probe()
    except Exception as exc:
        logger.warning("readiness: %s is failing: %s", name, describe_error(exc))
        return FAILING
    return OK


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def _cache() -> None:
    key, token = "monitoring:readyz", uuid.uuid4().hex
    cache.set(key, token, timeout=30)
    if cache.get(key) != token:
        raise RuntimeError("the cache did not return what was just stored in it")


def _broker() -> None:
    broker_reachable(timeout=BROKER_TIMEOUT_SECONDS)


def _static() -> None:
    """Production serves static files from the manifest `collectstatic` writes: without it
    every page fails to render. Storages without a manifest (development) have nothing to
    check."""
    from django.contrib.staticfiles.storage import ManifestFilesMixin
    from django.core.files.storage import storages

    storage = storages["staticfiles"]
    if isinstance(storage, ManifestFilesMixin) and not storage.read_manifest():
        raise RuntimeError(f"no static files manifest in {storage.location}: run collectstatic")


def readiness() -> dict[str, str]:
    """{part: status}: "ok", else why (a network: never-scanned, stale, lagging)."""
    checks = {
        "database": _check("the database", _database),
        "cache": _check("the cache", _cache),
        "broker": _check("the broker", _broker),
        "static": _check("the static files", _static),
    }
    if checks["database"] == OK:
        try:
            for health in networks_health():
                checks[f"network:{health.key}"] = health.problem or OK
        except Exception as exc:
            logger.warning("readiness: the networks could not be read: %s", describe_error(exc))
            checks["networks"] = UNKNOWN
    else:
        checks["networks"] = UNKNOWN
    return checks
