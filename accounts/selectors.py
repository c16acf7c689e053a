"""Reads of the account shared by its pages and the API."""

from .models import BillingDetails, User


def billing_details(*, user: User) -> BillingDetails | None:
    """The details the customer wants on receipts, or None when never given."""
    return BillingDetails.objects.filter(user=user).first()
