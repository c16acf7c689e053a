"""The two downloads of a paid order: the diagnostics kit (with a fresh upload token) and the
pilot folder. Each is generated on request for the customer's own order, in their language."""

from dataclasses import dataclass

from django.conf import settings
from django.urls import reverse

from accounts.models import User
from rental.models import Order

from ..exceptions import KitUnavailable
from ..kit.diagnostics import build_diagnostics_zip
from ..kit.pilot_folder import build_pilot_zip
from .tokens import kit_token_issue, reports_open


@dataclass(frozen=True, slots=True)
class Kit:
    filename: str
    content: bytes


def _kit_order(order_id: int, customer: User) -> Order:
    """The customer's own order while it accepts reports (Order.DoesNotExist otherwise for
    another customer's; KitUnavailable before payment or after the rental)."""
    order = Order.objects.select_related("gpu_model").get(pk=order_id, customer=customer)
    if not reports_open(order):
        raise KitUnavailable()
    return order


def upload_url(order: Order) -> str:
    """Where diagnose.py --upload posts the report: absolute, from SITE_URL."""
    path = reverse("pilot:report_upload_api", kwargs={"order_id": order.pk})
    return settings.SITE_URL.rstrip("/") + path


def kit_diagnostics(*, order_id: int, customer: User) -> Kit:
    """The diagnostics kit with a new upload token: the previous kit's token stops working."""
    order = _kit_order(order_id, customer)
    token = kit_token_issue(order=order)
    content = build_diagnostics_zip(
        order=order, token=token, upload_url=upload_url(order), language=customer.language
    )
    return Kit(filename=f"diagnostics-{order.reference}.zip", content=content)


def kit_pilot_folder(*, order_id: int, customer: User) -> Kit:
    order = _kit_order(order_id, customer)
    content = build_pilot_zip(order=order, language=customer.language)
    return Kit(filename=f"pilot-{order.reference}.zip", content=content)
