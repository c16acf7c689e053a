from django.conf import settings

from .models import User


def user_set_language(*, user: User, language: str) -> None:
    """Store the language a customer chose, so that emails follow it."""
    if language in dict(settings.LANGUAGES) and user.language != language:
        User.objects.filter(pk=user.pk).update(language=language)
