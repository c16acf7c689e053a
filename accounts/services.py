from django.conf import settings
from django.db import transaction

from .locks import lock_user
from .models import BillingDetails, User
from .ssh_keys import SshPublicKey, parse_ssh_public_key


def user_set_language(*, user: User, language: str) -> None:
    """Store the language a customer chose, so that emails follow it."""
    if language in dict(settings.LANGUAGES) and user.language != language:
        User.objects.filter(pk=user.pk).update(language=language)


def user_set_ssh_key(*, user: User, text: str) -> SshPublicKey | None:
    """Save the customer's SSH public key as one normalised line; empty text removes it.

    Raises ValidationError for a key that is not valid, and then changes nothing.
    """
    key = parse_ssh_public_key(text) if text.strip() else None
    line = key.line if key else ""
    with transaction.atomic():
        User.objects.filter(pk=user.pk).update(ssh_public_key=line)
    user.ssh_public_key = line
    return key


def user_set_billing_details(
    *, user: User, company_name: str, vat_number: str, address: str
) -> BillingDetails:
    """Save the optional details the customer wants on receipts issued from now on (receipts
    already issued keep the details they were issued with). Empty fields stay empty."""
    values = {
        "company_name": company_name.strip(),
        "vat_number": vat_number.strip(),
        "address": address.strip(),
    }
    details, _ = BillingDetails.objects.update_or_create(user=user, defaults=values)
    return details


BILLING_FIELDS = ("company_name", "vat_number", "address")


def user_change_billing_details(*, user: User, **changes: str) -> BillingDetails:
    """Change only the given billing details, keeping the others (the API's PATCH), under the
    user's row lock: two changes at once to different fields both keep theirs."""
    unknown = set(changes) - set(BILLING_FIELDS)
    if unknown:
        raise ValueError(f"not billing details: {sorted(unknown)}")
    with transaction.atomic():
        lock_user(user.pk)
        current = BillingDetails.objects.filter(user=user).first()
        values = {name: getattr(current, name) if current else "" for name in BILLING_FIELDS}
        return user_set_billing_details(user=user, **{**values, **changes})
