"""The embedded default used by `make run`: no database or broker server needed."""

from .base import *  # noqa: F403
from .base import env_bool

DEBUG = env_bool("DEBUG", True)
# Webhooks may go to a receiver on this machine or the local network.
WEBHOOK_ALLOW_PRIVATE_ADDRESSES = env_bool("WEBHOOK_ALLOW_PRIVATE_ADDRESSES", True)

# make run's demo hosts (rental/management/commands/demo_hosts.py): real accounts on this
# machine named grdemo-*, the administrative key made by the demo under var/.
HOSTS_ACCOUNT_PREFIX = env("HOSTS_ACCOUNT_PREFIX", "grdemo-")  # noqa: F405
HOSTS_ADMIN_KEY_FILE = env(  # noqa: F405
    "HOSTS_ADMIN_KEY_FILE",
    str(VAR_DIR / "demo-hosts" / "admin-key" / "admin_ed25519"),  # noqa: F405
)

# make run's chain mines a block every ANVIL_BLOCK_TIME seconds (2) and a payment needs 3
# confirmations: looking every 5 s, the watcher found most transfers already confirmed, and the
# payment page never showed them "seen". Every second, a transfer is recorded seen within a
# second of the block after its own, with 2 of its 3 confirmations.
PAYMENT_SCAN_INTERVAL_SECONDS = int(env("PAYMENT_SCAN_INTERVAL_SECONDS", "1"))  # noqa: F405
CELERY_BEAT_SCHEDULE = {  # noqa: F405
    **CELERY_BEAT_SCHEDULE,  # noqa: F405
    "scan-networks": {
        **CELERY_BEAT_SCHEDULE["scan-networks"],  # noqa: F405
        "schedule": float(PAYMENT_SCAN_INTERVAL_SECONDS),
    },
}

# Ctrl-C stops make run's chain at once, often during the worker's last scan: urllib3 warned of
# each retry ("Connection refused") before the scan's own RpcError, which is still logged.
LOGGING = {  # noqa: F405
    **LOGGING,  # noqa: F405
    "loggers": {"urllib3.connectionpool": {"level": "ERROR"}},
}
