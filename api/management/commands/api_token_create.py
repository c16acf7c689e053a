"""An API token for a customer, from the command line (the README's walkthrough, scripts).

The same service as the account page (api.tokens.token_create): the raw token is printed once
and only its SHA-256 is stored.
"""

from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from accounts.models import User
from api.tokens import token_create


class Command(BaseCommand):
    help = "Create an API token for a customer and print it once."

    def add_arguments(self, parser):
        parser.add_argument("email", help="the customer's email address")
        parser.add_argument("--name", default="command line", help="what the token is for")
        parser.add_argument(
            "--scopes",
            default="read,order,pay",
            help="comma-separated: read, order, pay, withdraw, tokens",
        )
        parser.add_argument(
            "--days", type=int, help="expires after this many days (default: never)"
        )

    def handle(self, *args, email, name, scopes, days, **options):
        owner = User.objects.filter(email__iexact=email.strip()).first()
        if owner is None:
            raise CommandError(f"No account with the email address {email!r}.")
        if days is not None and days < 1:
            raise CommandError("--days must be 1 or more.")
        expires_at = timezone.now() + timedelta(days=days) if days else None
        wanted = [scope.strip() for scope in scopes.split(",") if scope.strip()]
        try:
            created = token_create(owner=owner, name=name, scopes=wanted, expires_at=expires_at)
        except ValueError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(created.raw)
