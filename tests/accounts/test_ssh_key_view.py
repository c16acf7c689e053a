"""Customers save, replace and remove their SSH public key from the account page."""

import re
import subprocess

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from accounts.services import user_set_ssh_key

URL = reverse("accounts:ssh_key")
OVERVIEW = reverse("accounts:overview")


def generate(directory, name: str, *arguments: str) -> tuple[str, str]:
    """A fresh key from ssh-keygen: its .pub line and the fingerprint ssh-keygen lists."""
    path = directory / name
    subprocess.run(
        ["/usr/bin/ssh-keygen", "-q", *arguments, "-N", "", "-C", "grace@laptop", "-f", path],
        check=True,
    )
    listed = subprocess.run(
        ["/usr/bin/ssh-keygen", "-lf", f"{path}.pub"], check=True, capture_output=True, text=True
    )
    return (directory / f"{name}.pub").read_text(), listed.stdout.split()[1]


@pytest.fixture(scope="module")
def ed25519(tmp_path_factory) -> tuple[str, str]:
    return generate(tmp_path_factory.mktemp("ssh"), "id_ed25519", "-t", "ed25519")


@pytest.fixture(scope="module")
def weak_rsa(tmp_path_factory) -> str:
    return generate(tmp_path_factory.mktemp("ssh"), "id_rsa", "-t", "rsa", "-b", "1024")[0]


def saved_key(user: User) -> str:
    user.refresh_from_db()
    return user.ssh_public_key


def test_the_overview_says_when_no_key_is_saved(customer_client):
    response = customer_client.get(OVERVIEW)
    html = response.content.decode()
    assert "No SSH key saved: new orders will ask for one." in html
    assert f'action="{URL}"' in html
    assert "Save SSH key" in html
    assert response.context["saved_key"] is None
    assert not response.context["ssh_key_form"].is_bound


def test_saving_a_valid_key_shows_its_fingerprint(customer_client, customer, ed25519):
    public, fingerprint = ed25519
    response = customer_client.post(URL, {"ssh_public_key": f"\n  {public}\n"})
    assert response.status_code == 302
    assert response["Location"] == OVERVIEW
    assert saved_key(customer) == public.strip()

    page = customer_client.get(OVERVIEW)
    html = page.content.decode()
    assert "Your SSH key is saved." in html
    assert fingerprint in html
    assert "ssh-ed25519" in html
    assert "grace@laptop" in html
    assert "No SSH key saved" not in html
    # The form offers the saved key for editing.
    assert page.context["ssh_key_form"].initial["ssh_public_key"] == public.strip()


def test_an_invalid_key_is_refused_with_a_clear_message_and_nothing_changes(
    customer_client, customer, ed25519, weak_rsa
):
    user_set_ssh_key(user=customer, text=ed25519[0])
    before = saved_key(customer)

    response = customer_client.post(URL, {"ssh_public_key": weak_rsa})
    assert response.status_code == 400
    html = response.content.decode()
    assert "This RSA key has 1024 bits, and at least 2048 are needed." in html
    # The error sits next to the field, and the field points at it.
    textarea = re.search(r"<textarea[^>]*>", html).group(0)
    assert 'aria-invalid="true"' in textarea
    assert "id_ssh_public_key_error" in textarea
    assert 'id="id_ssh_public_key_error"' in html
    # The page still shows the key that stays saved.
    assert ed25519[1] in html
    assert saved_key(customer) == before


def test_a_private_key_is_refused_with_a_warning(customer_client, customer, tmp_path):
    subprocess.run(
        ["/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", tmp_path / "k"], check=True
    )
    response = customer_client.post(URL, {"ssh_public_key": (tmp_path / "k").read_text()})
    assert response.status_code == 400
    assert "This is a private key. Never share it" in response.content.decode()
    assert saved_key(customer) == ""


def test_emptying_the_field_removes_the_saved_key(customer_client, customer, ed25519):
    user_set_ssh_key(user=customer, text=ed25519[0])
    response = customer_client.post(URL, {"ssh_public_key": "  "}, follow=True)
    assert response.redirect_chain == [(OVERVIEW, 302)]
    html = response.content.decode()
    assert "Your saved SSH key is removed." in html
    assert "No SSH key saved: new orders will ask for one." in html
    assert saved_key(customer) == ""


def test_anonymous_visitors_are_sent_to_log_in(client, db, ed25519):
    response = client.post(URL, {"ssh_public_key": ed25519[0]})
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))


def test_a_post_without_csrf_token_is_forbidden(customer, ed25519):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(customer)
    response = browser.post(URL, {"ssh_public_key": ed25519[0]})
    assert response.status_code == 403
    assert saved_key(customer) == ""


def test_get_is_not_allowed(customer_client):
    assert customer_client.get(URL).status_code == 405


def test_another_customer_key_is_untouched(customer_client, customer, make_customer, ed25519):
    other = make_customer()
    customer_client.post(URL, {"ssh_public_key": ed25519[0]})
    assert saved_key(other) == ""
    assert saved_key(customer) == ed25519[0].strip()
