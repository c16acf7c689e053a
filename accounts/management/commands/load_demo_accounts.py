import os

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

DEMO_ADMIN_EMAIL = "admin@example.com"


class Command(BaseCommand):
    help = "Create the demo administrator used on `make run` (development only)."

    def handle(self, *args, **options):
        if not settings.DEBUG:
            raise CommandError("Demo accounts exist only in development (DEBUG on).")
        password = os.environ.get("DEMO_PASSWORD", "demo-password")
        User = get_user_model()
        if not User.objects.filter(email=DEMO_ADMIN_EMAIL).exists():
            User.objects.create_superuser(
                DEMO_ADMIN_EMAIL, password, first_name="Demo", last_name="Administrator"
            )
            self.stdout.write(
                f"Demo administrator: {DEMO_ADMIN_EMAIL} / {password} (Django admin at /admin/)"
            )
        else:
            self.stdout.write(f"Demo administrator: {DEMO_ADMIN_EMAIL} (Django admin at /admin/)")
