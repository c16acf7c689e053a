import os

from allauth.account.models import EmailAddress
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError

DEMO_USERS = [
    # email, first name, last name, groups, staff, superuser
    ("admin@example.com", "Demo", "Administrator", (), True, True),
    ("operator@example.com", "Olga", "Operator", ("operators",), True, False),
    ("finance@example.com", "Fabio", "Finance", ("finance",), True, False),
    ("customer@example.com", "Carla", "Customer", (), False, False),
]


# A public key only (its private half was never kept): the demo customer's orders can be
# marked prepared at once. Real customers paste their own on the account or order page.
DEMO_CUSTOMER_SSH_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINoy7kXxjevBLm4hN/0T1oA5kiAzczBsDxewpd1quBh2 "
    "demo-customer@example.com"
)


class Command(BaseCommand):
    help = "Create the demo users used on `make run` (development only)."

    def handle(self, *args, **options):
        if not settings.DEBUG:
            raise CommandError("Demo accounts exist only in development (DEBUG on).")
        password = os.environ.get("DEMO_PASSWORD", "demo-password")
        User = get_user_model()
        for email, first, last, groups, staff, superuser in DEMO_USERS:
            user = User.objects.filter(email=email).first()
            if user is None:
                user = User.objects.create_user(
                    email,
                    password,
                    first_name=first,
                    last_name=last,
                    is_staff=staff,
                    is_superuser=superuser,
                )
                if not staff:
                    user.ssh_public_key = DEMO_CUSTOMER_SSH_KEY
                    user.save(update_fields=["ssh_public_key"])
            # Confirmed addresses: logging in asks no code of the demo users.
            EmailAddress.objects.update_or_create(
                user=user, email=user.email, defaults={"verified": True, "primary": True}
            )
            for name in groups:
                user.groups.add(Group.objects.get_or_create(name=name)[0])
        self.stdout.write(
            f"Demo users (password: {password}): {', '.join(u[0] for u in DEMO_USERS)}"
        )
