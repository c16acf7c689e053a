"""allauth's emails speak as the product, in the reader's language: "[GPU rental]" /
"[Noleggio GPU]" and our own wording, never allauth's "Hello from <host>!" or the site's domain."""

import re

import pytest
from django.conf import settings
from django.core import mail
from django.urls import reverse

from accounts.models import User

PASSWORD = "a-long-and-unusual-passphrase"
NEW_PASSWORD = "another-long-and-unusual-passphrase"
SIGNUP = {
    "first_name": "Katherine",
    "last_name": "Johnson",
    "email": "katherine@nasa.test",
    "password1": PASSWORD,
    "password2": PASSWORD,
}
WORDING = {
    "en": {
        "confirm_subject": "[GPU rental] Confirm your email address",
        "confirm": "Here is the code that confirms this email address for your GPU rental account.",
        "reset_subject": "[GPU rental] Choose a new password",
        "reset": "asked to reset the password of your GPU rental account.",
        "unknown_subject": "[GPU rental] No account with this address",
        "unknown": "Someone asked to reset the password of a GPU rental account with "
        "nobody@nasa.test",
        "hello": "Hello {name},",
        "hello_anyone": "Hello,",
        "signature": "GPU rental",
    },
    "it": {
        "confirm_subject": "[Noleggio GPU] Conferma il tuo indirizzo email",
        "confirm": "Ecco il codice che conferma questo indirizzo email per il tuo account su "
        "Noleggio GPU.",
        "reset_subject": "[Noleggio GPU] Scegli una nuova password",
        "reset": "ha chiesto di reimpostare la password del tuo account su Noleggio GPU.",
        "unknown_subject": "[Noleggio GPU] Nessun account con questo indirizzo",
        "unknown": "Qualcuno ha chiesto di reimpostare la password di un account su Noleggio GPU "
        "con l'indirizzo nobody@nasa.test",
        "hello": "Ciao {name},",
        "hello_anyone": "Ciao,",
        "signature": "Noleggio GPU",
    },
}
ALLAUTH_WORDING = ["Hello from", "Thank you for using", "example.com", "Password Reset E-mail"]


def speak(client, language):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language


def assert_speaks_as_the_product(message, language, name=None):
    words = WORDING[language]
    body = message.body
    lines = body.strip().splitlines()
    assert lines[0] == (words["hello"].format(name=name) if name else words["hello_anyone"])
    assert lines[-1] == words["signature"]
    for phrase in ALLAUTH_WORDING:
        assert phrase not in body and phrase not in message.subject
    # The host appears only inside the links the email carries, never as the site's name.
    prose = [line for line in lines if not line.startswith("http")]
    assert not any("testserver" in line for line in prose), body


def single_email():
    assert len(mail.outbox) == 1, [m.subject for m in mail.outbox]
    return mail.outbox.pop()


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_signup_email_names_the_product_in_the_reader_s_language(client, db, language):
    speak(client, language)
    response = client.post(reverse("account_signup"), SIGNUP)
    assert response.status_code == 302
    message = single_email()
    assert message.to == ["katherine@nasa.test"]
    assert message.subject == WORDING[language]["confirm_subject"]
    assert WORDING[language]["confirm"] in " ".join(message.body.split())
    assert_speaks_as_the_product(message, language, name="Katherine")
    assert User.objects.get(email="katherine@nasa.test").language == language


@pytest.mark.parametrize("language", ["en", "it"])
def test_a_password_reset_names_the_product_and_its_link_sets_the_new_password(
    client, make_customer, language
):
    customer = make_customer(email="grace@nasa.test", first_name="Grace", language=language)
    speak(client, language)
    client.post(reverse("account_reset_password"), {"email": "grace@nasa.test"})
    message = single_email()
    assert message.subject == WORDING[language]["reset_subject"]
    assert WORDING[language]["reset"] in " ".join(message.body.split())
    assert_speaks_as_the_product(message, language, name="Grace")

    (link,) = re.findall(r"^http://testserver(/\S+)$", message.body, flags=re.MULTILINE)
    form = client.get(link, follow=True)
    assert form.status_code == 200
    done = client.post(
        form.redirect_chain[-1][0] if form.redirect_chain else link,
        {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD},
    )
    assert done.status_code == 302
    customer.refresh_from_db()
    assert customer.check_password(NEW_PASSWORD)


@pytest.mark.parametrize("language", ["en", "it"])
def test_a_reset_for_an_unknown_address_names_the_product_too(client, db, language):
    speak(client, language)
    client.post(reverse("account_reset_password"), {"email": "nobody@nasa.test"})
    message = single_email()
    assert message.subject == WORDING[language]["unknown_subject"]
    assert WORDING[language]["unknown"] in " ".join(message.body.split())
    assert_speaks_as_the_product(message, language)
    assert not User.objects.exists()
