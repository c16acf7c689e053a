"""Row locks of accounts: first in the house's lock order (see rental.locks); and the keys of
the house's advisory locks."""

import hashlib

from .models import User


def advisory_key(namespace: str, number: int) -> int:
    """A key for `pg_advisory_xact_lock(bigint)`: a 64-bit hash of the namespace and the number,
    in bigint's range for any number (a namespace added to an order id overflowed it from id
    1,769,786,010,696,155,136 on: a 500). Two keys collide with odds of 1 in 2**64; a collision
    would only make two orders wait for each other."""
    digest = hashlib.blake2b(f"{namespace}:{number}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def lock_user(user_id: int) -> None:
    """A user's row, locked, to queue one user's creations (their orders, their webhook
    endpoints) one at a time. Taken before any other row. Raises User.DoesNotExist."""
    User.objects.select_for_update(of=("self",), no_key=True).only("pk").get(pk=user_id)
