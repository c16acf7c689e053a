"""Mark an order's hosts prepared from the command line: what an operator does on
/ops/orders/<id>/ (rental.services.provisioning.order_mark_prepared), for scripts and the
README's API walkthrough. The worker then checks SSH on every host before the order is active.
"""

from django.core.management.base import BaseCommand, CommandError

from accounts.models import User
from accounts.roles import OPERATORS, has_role
from rental.exceptions import RentalError
from rental.models import Order
from rental.services.provisioning import order_mark_prepared


class Command(BaseCommand):
    help = "Mark an order's hosts prepared (as an operator would on its ops page)."

    def add_arguments(self, parser):
        parser.add_argument("order_id", type=int)
        parser.add_argument("--operator", required=True, help="the operator's email address")
        parser.add_argument("--notes", default="", help="access details for the customer")

    def handle(self, *args, order_id, operator, notes, **options):
        actor = User.objects.filter(email__iexact=operator.strip()).first()
        if actor is None or not has_role(actor, OPERATORS):
            raise CommandError(f"{operator!r} is not an operator's account.")
        try:
            order = order_mark_prepared(order_id=order_id, actor=actor, access_notes=notes)
        except Order.DoesNotExist:
            raise CommandError(f"No order {order_id}.") from None
        except RentalError as error:
            raise CommandError(str(error.message)) from None
        self.stdout.write(f"{order.reference} marked prepared; the worker checks SSH now.")
