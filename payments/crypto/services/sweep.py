"""The minute sweep of payments whose time ran out (Celery beat: `expire_payments`)."""

from . import extensions
from . import payments as crypto


def payments_sweep() -> int:
    """Expire the payments whose time ran out, and close those of extensions that can no
    longer be paid (their rental ended: rental cannot call payments); how many changed."""
    return crypto.payments_expire() + extensions.extension_payments_close_stale()
