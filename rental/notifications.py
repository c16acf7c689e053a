"""Customer emails, written in the customer's language."""

from django.conf import settings
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation

from .models import Order


def send_order_email(*, order: Order, template: str) -> None:
    customer = order.customer
    with translation.override(customer.language or settings.LANGUAGE_CODE):
        context = {
            "order": order,
            "customer": customer,
            "order_url": settings.SITE_URL.rstrip("/")
            + reverse("rental:order_detail", kwargs={"order_id": order.pk}),
        }
        subject = render_to_string(f"rental/email/{template}_subject.txt", context).strip()
        body = render_to_string(f"rental/email/{template}.txt", context)
    send_mail(subject, body, None, [customer.email])
