"""Secrets to Standard Webhooks' form, keeping every endpoint's HMAC key.

Before, a secret was `whsec_` + token_urlsafe and the HMAC key was the whole text's UTF-8
bytes. Standard Webhooks reads a secret as `whsec_` + base64 of the key, so each secret
becomes `whsec_` + base64(old secret text): the same key bytes (49, within the spec's 24–64).
A receiver that kept its old secret derives the new one itself (the README says how); the
signature's format changes anyway, so every receiver updates its check once.
"""

import base64

from django.db import migrations


def to_standard(apps, schema_editor):
    Endpoint = apps.get_model("webhooks", "WebhookEndpoint")
    for endpoint in Endpoint.objects.only("pk", "secret").iterator():
        endpoint.secret = "whsec_" + base64.b64encode(endpoint.secret.encode()).decode()
        endpoint.save(update_fields=["secret"])


def to_legacy(apps, schema_editor):
    """Back to the old text where the key is one (secrets made since then have random key
    bytes that no legacy text holds: they stay, and their receivers need a new secret)."""
    Endpoint = apps.get_model("webhooks", "WebhookEndpoint")
    for endpoint in Endpoint.objects.only("pk", "secret").iterator():
        key = base64.b64decode(endpoint.secret.removeprefix("whsec_"))
        if key.startswith(b"whsec_") and key.isascii():
            endpoint.secret = key.decode()
            endpoint.save(update_fields=["secret"])


class Migration(migrations.Migration):
    dependencies = [("webhooks", "0003_endpoint_previous_secret")]

    operations = [migrations.RunPython(to_standard, to_legacy)]
