from allauth.account.adapter import DefaultAccountAdapter
from allauth.account.models import EmailAddress
from allauth.core import ratelimit
from django.conf import settings
from django.utils import translation
from django.utils.translation import get_language

from .models import User


class AccountAdapter(DefaultAccountAdapter):
    def save_user(self, request, user, form, commit=True):
        """Remember the language the customer signed up in: their emails follow it."""
        user.language = (get_language() or "en")[:2]
        return super().save_user(request, user, form, commit=commit)

    def send_mail(self, template_prefix: str, email: str, context: dict) -> None:
        """allauth's emails too are written in the language of the account they go to, and
        know its owner (`owner`: None for an address without an account)."""
        owner = User.objects.filter(email__iexact=email).first()
        language = owner.language if owner else get_language()
        with translation.override(language or settings.LANGUAGE_CODE):
            super().send_mail(template_prefix, email, {"owner": owner, **context})

    def authenticate(self, request, **credentials):
        """A right password for an address not yet confirmed earns a fresh code at once: the
        limit on codes sent ("confirm_email") is there against mail floods by whoever types an
        address, and must not turn a customer who signed up a minute ago in another tab away
        as "too many failed login attempts". Within its own limit ("confirm_email_on_login",
        per address and per IP): whoever signed up with someone else's address and logs in
        again and again cannot flood that mailbox with codes."""
        user = super().authenticate(request, **credentials)
        email = credentials.get("email")
        unconfirmed = EmailAddress.objects.filter(user=user, email__iexact=email, verified=False)
        if (
            user is not None
            and email
            and unconfirmed.exists()
            and ratelimit.consume(request, action="confirm_email_on_login", key=email.lower())
        ):
            ratelimit.clear(request, action="confirm_email", key=email.lower())
        return user
