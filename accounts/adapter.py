from allauth.account.adapter import DefaultAccountAdapter
from django.utils.translation import get_language


class AccountAdapter(DefaultAccountAdapter):
    def save_user(self, request, user, form, commit=True):
        """Remember the language the customer signed up in: their emails follow it."""
        user.language = (get_language() or "en")[:2]
        return super().save_user(request, user, form, commit=commit)
