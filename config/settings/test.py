"""Tests run against real PostgreSQL and Redis (overridable through the same variables)."""

import os

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/gpu_rental")
# A database number of its own: the test suite clears it between tests.
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/9")

from .base import *  # noqa: E402, F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
MAILERS = {"default": {"BACKEND": "django.core.mail.backends.locmem.EmailBackend"}}
# Tasks run in-process right after the commit that queued them (delay_on_commit).
CELERY_TASK_ALWAYS_EAGER = True
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

# Readiness checks: a short timeout and few attempts, so a silent port costs little.
READINESS_TIMEOUT_SECONDS = 1.0
READINESS_MAX_ATTEMPTS = 3
PROVISIONING_DRIVER = "rental.services.provisioning.ManualDriver"
