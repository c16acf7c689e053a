"""bench/http.py --db-modes: production settings with psycopg's connection pool instead of
persistent connections (Django needs CONN_MAX_AGE 0 with a pool)."""

from config.settings.production import *  # noqa: F403
from config.settings.production import DATABASES

DATABASES["default"]["CONN_MAX_AGE"] = 0
DATABASES["default"]["CONN_HEALTH_CHECKS"] = False
DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {"min_size": 1, "max_size": 4}
