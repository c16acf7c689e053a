from decimal import Decimal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from payments.ledger.services.balance import balance_adjust

DEMO_CUSTOMER = "customer@example.com"
DEMO_FINANCE = "finance@example.com"
DEMO_CREDIT = Decimal("5000.00")


class Command(BaseCommand):
    help = "Credit the demo customer's USD balance once, as finance would (development only)."

    def handle(self, *args, **options):
        if not settings.DEBUG:
            raise CommandError("The demo balance exists only in development (DEBUG on).")
        User = get_user_model()
        customer = User.objects.get(email=DEMO_CUSTOMER)
        finance = User.objects.get(email=DEMO_FINANCE)
        # A fixed request key: running this again posts nothing more.
        posted = balance_adjust(
            customer=customer,
            amount=DEMO_CREDIT,
            credit=True,
            reason="Demo credit: bank transfer received",
            actor=finance,
            request_key="demo-opening-credit",
        )
        self.stdout.write(
            f"Demo customer {DEMO_CUSTOMER} credited {DEMO_CREDIT} USD (#{posted.pk})."
        )
