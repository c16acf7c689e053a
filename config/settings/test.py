"""Tests run against real PostgreSQL and Redis (overridable through the same variables)."""

import os

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/gpu_rental")
# A database number of its own: the test suite clears it between tests. Under pytest,
# tests/isolation.py gives each run a private Redis server and each worker its own
# databases.
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/9")

from config.queues import queue_name  # noqa: E402

from .base import *  # noqa: E402, F403

# Each run of the suite has a test database of its own (tests/isolation.py names the
# run), to which pytest-xdist adds the worker's suffix: runs at once and workers never share one.
_database = DATABASES["default"]  # noqa: F405
if os.environ.get("TEST_RUN_ID") and _database["ENGINE"].endswith("postgresql"):
    _database["TEST"] = {"NAME": f"test_{_database['NAME']}_{os.environ['TEST_RUN_ID']}"}
if _database["ENGINE"].endswith("postgresql"):
    # Test databases are thrown away: a commit need not wait for its WAL to reach the disk
    # (about 1 ms a commit here). What other sessions see is the same; only a crash of the
    # server could lose the last commits.
    _database.setdefault("OPTIONS", {})["options"] = "-c synchronous_commit=off"

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
# Webhooks go to receivers the tests start on 127.0.0.1 (the guard's tests switch it off).
WEBHOOK_ALLOW_PRIVATE_ADDRESSES = True
# Tasks run in-process right after the commit that queued them (delay_on_commit), except in a
# real Celery worker started by a test (tests/celery_worker.py sets TEST_CELERY_WORKER=1).
TEST_CELERY_WORKER = env_bool("TEST_CELERY_WORKER", False)  # noqa: F405
CELERY_TASK_ALWAYS_EAGER = not TEST_CELERY_WORKER
CELERY_TASK_EAGER_PROPAGATES = True
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# No network is enabled unless a test starts a chain (tests/chain_fixtures.py), whatever the
# developer's environment or var/local-chain.json say.
PAYMENT_RPC_URLS = dict.fromkeys(PAYMENT_NETWORK_KEYS)  # noqa: F405
LOCAL_TOKEN_ADDRESS = None
LOCAL_CHAIN_FILE = VAR_DIR / "tests-have-no-local-chain.json"  # noqa: F405
# The local chain's block time the payment page's poll follows (tests choose theirs).
LOCAL_CHAIN_BLOCK_TIME_SECONDS = 2.0
if TEST_CELERY_WORKER:
    # That worker takes the test's chain, queue and redelivery timing from the variables the
    # test passes it (the broker is CELERY_BROKER_URL, the database DATABASE_URL).
    PAYMENT_RPC_URLS["local"] = env("TEST_CELERY_WORKER_RPC_URL_LOCAL")  # noqa: F405
    LOCAL_TOKEN_ADDRESS = env("TEST_CELERY_WORKER_LOCAL_TOKEN_ADDRESS")  # noqa: F405
    # The test's queue for what it sends, and its own queue per kind (config/queues.py) named
    # after it: "<queue>.payments", "<queue>.webhooks", ...
    _queue = env("TEST_CELERY_WORKER_QUEUE", "celery")  # noqa: F405
    CELERY_TASK_DEFAULT_QUEUE = queue_name(DEFAULT_QUEUE, _queue)  # noqa: F405
    CELERY_TASK_ROUTES = task_routes(_queue)  # noqa: F405
    _visibility_timeout = env("TEST_CELERY_WORKER_VISIBILITY_TIMEOUT", "3600")  # noqa: F405
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": int(_visibility_timeout),
        # Unacknowledged messages past that timeout are looked for every second.
        "unacked_restore_interval": 1,
        "unacked_restore_throttle": 1,
    }

# Readiness checks: a short timeout and few attempts, so a silent port costs little.
READINESS_TIMEOUT_SECONDS = 1.0
READINESS_MAX_ATTEMPTS = 3
