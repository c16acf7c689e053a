"""Row locks of accounts: first in the house's lock order (see rental.locks)."""

from .models import User


def lock_user(user_id: int) -> None:
    """A user's row, locked, to queue one user's creations (their orders, their webhook
    endpoints) one at a time. Taken before any other row. Raises User.DoesNotExist."""
    User.objects.select_for_update(of=("self",), no_key=True).only("pk").get(pk=user_id)
