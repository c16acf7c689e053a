"""The data bench/http.py drives, created through the application's own services.

Run by bench/http.py with the bench's environment (production settings on the throw-away
database, already migrated with the demo catalogue loaded). Prints one JSON object: the
customer's session cookie, the ids of the pages to load, and the database settings the
application resolved (the bare baseline is given the same).
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.test import Client  # noqa: E402


def main() -> None:
    from accounts.models import User
    from payments.crypto.services.payments import payment_create_for_order
    from rental.models import GpuModel, Preparation
    from rental.services import Configuration, order_create

    customer = User.objects.create_user(
        "bench-customer@example.com",
        "bench-only-password",
        first_name="Bench",
        last_name="Customer",
    )
    models = list(GpuModel.objects.filter(active=True).order_by("pk"))
    orders = [
        order_create(
            customer=customer,
            configuration=Configuration(
                gpu_model=models[number % len(models)],
                duration_days=7,
                lots=1 + number,
                preparation=Preparation.PYTORCH,
            ),
        )
        for number in range(settings.MAX_UNPAID_ORDERS)
    ]
    order = orders[-1]
    # The node is not running: the payment opens without a head block, as it does when the
    # node does not answer; the pages never call a node.
    payment = payment_create_for_order(
        order_id=order.pk, customer=customer, network_key="local", asset_symbol="tUSDC"
    )
    client = Client()
    client.force_login(customer)
    database = settings.DATABASES["default"]
    print(
        json.dumps(
            {
                "session_cookie": f"{settings.SESSION_COOKIE_NAME}="
                f"{client.cookies[settings.SESSION_COOKIE_NAME].value}",
                "order_id": order.pk,
                "order_reference": order.reference,
                "payment_id": payment.pk,
                "payment_reference": payment.reference,
                "gpu_model": models[0].slug,
                "database": {
                    key: database[key]
                    for key in (
                        "ENGINE",
                        "NAME",
                        "USER",
                        "PASSWORD",
                        "HOST",
                        "PORT",
                        "CONN_MAX_AGE",
                        "CONN_HEALTH_CHECKS",
                        "OPTIONS",
                    )
                    if key in database
                },
                "settings_module": os.environ["DJANGO_SETTINGS_MODULE"],
            }
        )
    )


if __name__ == "__main__":
    main()
