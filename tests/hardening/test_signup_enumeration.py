"""Sign-up never tells whether an address already has an account: a taken address gets the
same answer as a new one, and its owner is told by email instead."""

import re
from urllib.parse import urlencode

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse

from accounts.models import User

from .page_text import visible_text

PASSWORD = "a-long-and-unusual-passphrase"


def sign_up(email: str, **extra) -> tuple[Client, object]:
    browser = Client()
    data = {
        "first_name": "Katherine",
        "last_name": "Johnson",
        "email": email,
        "password1": PASSWORD,
        "password2": PASSWORD,
        **extra,
    }
    return browser, browser.post(reverse("account_signup"), data)


def what_the_browser_sees(browser: Client, response, email: str) -> tuple:
    """Status, redirect target, and the visible text of the page it leads to (the address the
    visitor typed is the only thing allowed to differ)."""
    location = response.get("Location")
    page = browser.get(location)
    return (
        response.status_code,
        location,
        page.status_code,
        visible_text(page.content.decode()).replace(email, "<address>"),
        "_auth_user_id" in browser.session,
    )


# allauth's verification code, alone on its line: XXXX-XXXX, capital letters and digits.
CODE_LINE = re.compile(r"^\s*([A-Z0-9]{4}-[A-Z0-9]{4})\s*$", re.MULTILINE)


def code_in(message) -> str:
    return CODE_LINE.search(message.body).group(1)


@pytest.mark.parametrize("typed", ["taken@example.com", "TAKEN@Example.com"])
def test_a_taken_address_gets_the_same_answer_as_a_new_one(make_customer, typed):
    owner = make_customer(email="taken@example.com", first_name="Mary", last_name="Jackson")

    new_browser, new = sign_up("newcomer@example.com")
    taken_browser, taken = sign_up(typed)

    seen_new = what_the_browser_sees(new_browser, new, "newcomer@example.com")
    seen_taken = what_the_browser_sees(taken_browser, taken, "taken@example.com")
    assert seen_new == seen_taken
    status, location, page_status, text, logged_in = seen_taken
    assert (status, location, page_status, logged_in) == (
        302,
        reverse("account_email_verification_sent"),
        200,
        False,
    )
    assert "already" not in text.lower()
    assert "We've sent a code to <address>" in text

    # No second account; the owner's is untouched.
    assert list(User.objects.filter(email__iexact="taken@example.com")) == [owner]
    owner.refresh_from_db()
    assert (owner.first_name, owner.last_name) == ("Mary", "Jackson")
    assert owner.check_password("correct-horse-battery")

    # The owner gets one email saying someone tried to sign up with the address.
    to_owner = [message for message in mail.outbox if message.to == ["taken@example.com"]]
    assert len(to_owner) == 1
    assert to_owner[0].subject.endswith("] Someone tried to sign up with your address")
    body = to_owner[0].body
    assert "Someone tried to create a GPU rental account with taken@example.com" in body
    assert "http://testserver" + reverse("account_reset_password") in body
    assert "Hello Mary" in body
    # Nothing in it lets whoever typed the address in: no code, no link to confirm.
    assert "/accounts/confirm-email/" not in body
    assert not CODE_LINE.search(body)
    # The newcomer gets the code that finishes their sign-up.
    to_newcomer = [m for m in mail.outbox if m.to == ["newcomer@example.com"]]
    assert len(to_newcomer) == 1
    assert code_in(to_newcomer[0])


def test_the_owner_is_told_in_their_own_language(make_customer):
    make_customer(email="taken@example.com", first_name="Maria", language="it")
    sign_up("taken@example.com")
    (message,) = mail.outbox
    assert message.subject.endswith("] Qualcuno ha provato a registrarsi con il tuo indirizzo")
    assert "Ciao Maria" in message.body
    assert (
        "Qualcuno ha provato a creare un account su Noleggio GPU con l'indirizzo "
        "taken@example.com" in message.body
    )


def test_no_code_lets_anyone_into_the_taken_address(make_customer):
    make_customer(email="taken@example.com")
    browser, _ = sign_up("taken@example.com")
    for guess in ("ABCD-1234", "0000-0000", "ZZZZ-ZZZZ"):
        response = browser.post(reverse("account_email_verification_sent"), {"code": guess})
        assert "_auth_user_id" not in browser.session
    assert response.status_code == 302  # out of attempts: back to the login page
    assert response["Location"] == reverse("account_login")
    assert User.objects.filter(email__iexact="taken@example.com").count() == 1


def test_a_new_customer_types_the_code_and_comes_back_to_the_review(catalogue):
    review = (
        reverse("rental:review")
        + "?"
        + urlencode(
            {"gpu_model": "b200-180gb", "duration_days": 7, "lots": 3, "preparation": "pytorch"}
        )
    )
    browser, response = sign_up("katherine@example.com", next=review)
    assert response["Location"] == reverse("account_email_verification_sent")
    wrong = browser.post(reverse("account_email_verification_sent"), {"code": "AAAA-AAAA"})
    assert wrong.status_code == 200
    assert "Incorrect code." in visible_text(wrong.content.decode())
    assert "_auth_user_id" not in browser.session

    (message,) = mail.outbox
    done = browser.post(
        reverse("account_email_verification_sent"), {"code": code_in(message)}, follow=True
    )
    assert done.redirect_chain[-1][0] == review
    html = done.content.decode()
    assert "Katherine Johnson" in html
    assert "5,745.60 USD" in html
    user = User.objects.get(email="katherine@example.com")
    assert user.emailaddress_set.get().verified
    assert browser.session["_auth_user_id"] == str(user.pk)
