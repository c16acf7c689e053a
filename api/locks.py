"""Row locks of the API (webhooks have their own: api.webhooks.locks). A token is locked alone,
in its own transaction (see the house's lock order in rental.locks)."""

from .models import ApiToken


def lock_token(*, token_id: int, owner) -> ApiToken:
    """The owner's token, locked; another owner's raises ApiToken.DoesNotExist."""
    return ApiToken.objects.select_for_update(of=("self",), no_key=True).get(
        pk=token_id, owner=owner
    )
