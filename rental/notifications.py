"""Customer emails, written in the customer's language."""

from django.conf import settings
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation

from .models import REMINDER_HOURS, Order, OrderEmailKind
from .selectors import order_access

# kind → template name under templates/rental/email/ (`<name>.txt` and `<name>_subject.txt`)
TEMPLATES = {
    OrderEmailKind.PAYMENT_RECEIVED: "payment_received",
    OrderEmailKind.PROVISIONING_DELAYED: "provisioning_delayed",
    OrderEmailKind.READY: "ready",
    OrderEmailKind.REMINDER_72H: "reminder",
    OrderEmailKind.REMINDER_24H: "reminder",
    OrderEmailKind.REMINDER_1H: "reminder",
    OrderEmailKind.ENDED: "ended",
}


def send_order_email(*, order: Order, kind: str) -> None:
    customer = order.customer
    template = TEMPLATES[kind]
    with translation.override(customer.language or settings.LANGUAGE_CODE):
        context = {
            "order": order,
            "customer": customer,
            "hours": REMINDER_HOURS.get(kind),
            "access": order_access(order) if kind == OrderEmailKind.READY else [],
            "order_url": settings.SITE_URL.rstrip("/")
            + reverse("rental:order_detail", kwargs={"order_id": order.pk}),
        }
        subject = render_to_string(f"rental/email/{template}_subject.txt", context).strip()
        body = render_to_string(f"rental/email/{template}.txt", context)
    send_mail(subject, body, None, [customer.email])
