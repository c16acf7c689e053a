import re
from io import StringIO
from urllib.parse import urlencode

import pytest
from django.core import mail
from django.core.cache import cache, caches
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from accounts.models import User
from rental.models import Order

PASSWORD = "a-long-and-unusual-passphrase"
SIGNUP = {
    "first_name": "Katherine",
    "last_name": "Johnson",
    "email": "katherine@example.com",
    "password1": PASSWORD,
    "password2": PASSWORD,
}


def test_signup_asks_only_names_email_and_password(client, db):
    form = client.get(reverse("account_signup")).context["form"]
    assert list(form.fields) == ["first_name", "last_name", "email", "password1", "password2"]
    html = client.get(reverse("account_signup")).content.decode()
    form_html = html[html.index('action="/accounts/signup/"') :]
    form_html = form_html[: form_html.index("</form>")]
    names = set(re.findall(r'<(?:input|select|textarea)[^>]*name="([^"]+)"', form_html))
    assert names == {
        "csrfmiddlewaretoken",
        "first_name",
        "last_name",
        "email",
        "password1",
        "password2",
    }


def signup_code(message) -> str:
    return re.search(r"^\s*([A-Z0-9]{4}-[A-Z0-9]{4})\s*$", message.body, re.MULTILINE).group(1)


def test_signup_creates_the_customer_and_logs_in_once_the_mailed_code_is_typed(client, db):
    response = client.post(reverse("account_signup"), SIGNUP)
    assert response.status_code == 302
    assert response["Location"] == reverse("account_email_verification_sent")
    user = User.objects.get(email="katherine@example.com")
    assert (user.first_name, user.last_name) == ("Katherine", "Johnson")
    assert user.check_password(PASSWORD)
    assert "_auth_user_id" not in client.session
    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["katherine@example.com"]

    client.post(reverse("account_email_verification_sent"), {"code": signup_code(mail.outbox[0])})
    assert client.get(reverse("accounts:overview")).status_code == 200
    assert client.session["_auth_user_id"] == str(user.pk)
    assert user.emailaddress_set.get().verified


@pytest.mark.parametrize("missing", ["first_name", "last_name"])
def test_names_are_required(client, db, missing):
    response = client.post(reverse("account_signup"), {**SIGNUP, missing: "  "})
    assert response.status_code == 200
    assert "This field is required." in response.content.decode()
    assert not User.objects.exists()


def test_password_reset_answers_the_same_for_unknown_addresses(client, customer):
    known = client.post(reverse("account_reset_password"), {"email": customer.email})
    unknown = client.post(reverse("account_reset_password"), {"email": "nobody@example.com"})
    assert known.status_code == unknown.status_code == 302
    assert known["Location"] == unknown["Location"]


def test_login_is_by_email_case_insensitive(client, customer):
    response = client.post(
        reverse("account_login"),
        {"login": "GRACE@example.com", "password": "correct-horse-battery"},
    )
    assert response.status_code == 302
    assert client.get(reverse("accounts:overview")).context["user"] == customer


def test_failed_logins_are_rate_limited_in_redis(client, customer):
    assert type(caches["default"]).__name__ == "RedisCache"
    for _ in range(5):
        client.post(reverse("account_login"), {"login": customer.email, "password": "wrong"})
    # Even the right password is refused now, and the counter lives in the shared cache.
    response = client.post(
        reverse("account_login"), {"login": customer.email, "password": "correct-horse-battery"}
    )
    assert "Too many failed login attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session
    assert cache._cache.get_client(write=False).keys("*rl*")


def test_signup_from_the_review_comes_back_to_the_same_configuration(client, catalogue):
    review = (
        reverse("rental:review")
        + "?"
        + urlencode(
            {"gpu_model": "b200-180gb", "duration_days": 7, "lots": 3, "preparation": "pytorch"}
        )
    )
    client.post(reverse("account_signup"), {**SIGNUP, "next": review})
    (message,) = mail.outbox
    response = client.post(
        reverse("account_email_verification_sent"), {"code": signup_code(message)}, follow=True
    )
    assert response.redirect_chain[-1][0] == review
    html = response.content.decode()
    assert "Katherine Johnson" in html
    assert "katherine@example.com" in html
    assert "5,745.60 USD" in html


def test_login_from_the_review_comes_back_to_the_same_configuration(client, customer, catalogue):
    review = (
        reverse("rental:review")
        + "?"
        + urlencode(
            {"gpu_model": "h100-80gb", "duration_days": 30, "lots": 2, "preparation": "ubuntu"}
        )
    )
    response = client.post(
        reverse("account_login"),
        {"login": customer.email, "password": "correct-horse-battery", "next": review},
        follow=True,
    )
    assert response.redirect_chain[-1][0] == review
    assert "Confirm order · 3,427.20 USD" in response.content.decode()


def test_orders_are_found_from_another_browser_after_logging_in(customer, catalogue, place_order):
    order = place_order(customer, catalogue["h200"], lots=2)
    other_browser = Client()
    other_browser.post(
        reverse("account_login"), {"login": customer.email, "password": "correct-horse-battery"}
    )
    html = other_browser.get(reverse("rental:order_list")).content.decode()
    assert order.reference in html
    assert Order.objects.filter(customer=customer).count() == 1


@pytest.mark.parametrize("name", ["account_email", "account_change_password", "accounts:overview"])
def test_account_pages_are_reachable_when_logged_in(customer_client, name):
    assert customer_client.get(reverse(name)).status_code == 200


def test_password_change(customer_client, customer):
    response = customer_client.post(
        reverse("account_change_password"),
        {"oldpassword": "correct-horse-battery", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert response.status_code == 302
    customer.refresh_from_db()
    assert customer.check_password(PASSWORD)


def test_email_is_unique_whatever_the_case(make_customer):
    from django.core.exceptions import ValidationError

    make_customer(email="same@example.com")
    with pytest.raises(ValidationError):
        make_customer(email="SAME@example.com")


def test_an_htmx_poll_after_the_session_ended_loads_the_login_page_whole(client, catalogue):
    # Any login-protected URL polled by htmx: the order list stands in for a payment's status.
    response = client.get(reverse("rental:order_list"), headers={"HX-Request": "true"})
    assert response.status_code == 204
    assert response["HX-Redirect"].startswith(reverse("account_login"))
    # A normal browser request still gets the plain redirect.
    assert client.get(reverse("rental:order_list")).status_code == 302


def test_an_account_whose_address_was_never_confirmed_is_asked_for_the_code_once(client, db):
    # Made by an administrator (or before sign-up asked for the code): no confirmed address.
    staff = User.objects.create_user(
        "new.operator@example.com", "correct-horse-battery", first_name="Nia", last_name="Op"
    )
    credentials = {"login": staff.email, "password": "correct-horse-battery"}
    response = client.post(reverse("account_login"), credentials)
    assert response["Location"] == reverse("account_email_verification_sent")
    assert "_auth_user_id" not in client.session
    (message,) = mail.outbox
    assert message.to == [staff.email]
    client.post(reverse("account_email_verification_sent"), {"code": signup_code(message)})
    assert client.session["_auth_user_id"] == str(staff.pk)

    # From then on the password is enough.
    other_browser = Client()
    other_browser.post(reverse("account_login"), credentials)
    assert other_browser.session["_auth_user_id"] == str(staff.pk)
    assert len(mail.outbox) == 1


def test_the_demo_users_log_in_without_a_code(client, db, settings):
    settings.DEBUG = True
    for _ in range(2):  # idempotent
        call_command("load_demo_accounts", stdout=StringIO())
    client.post(
        reverse("account_login"), {"login": "operator@example.com", "password": "demo-password"}
    )
    assert client.session["_auth_user_id"] == str(User.objects.get(email="operator@example.com").pk)
    assert mail.outbox == []
