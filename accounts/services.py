from django.conf import settings
from django.db import transaction

from .models import User
from .ssh_keys import SshPublicKey, parse_ssh_public_key


def user_set_language(*, user: User, language: str) -> None:
    """Store the language a customer chose, so that emails follow it."""
    if language in dict(settings.LANGUAGES) and user.language != language:
        User.objects.filter(pk=user.pk).update(language=language)


def user_set_ssh_key(*, user: User, text: str) -> SshPublicKey | None:
    """Save the customer's SSH public key as one normalised line; empty text removes it.

    Raises ValidationError for a key that is not valid, and then changes nothing.
    """
    key = parse_ssh_public_key(text) if text.strip() else None
    line = key.line if key else ""
    with transaction.atomic():
        User.objects.filter(pk=user.pk).update(ssh_public_key=line)
    user.ssh_public_key = line
    return key
