"""Who may move money: staff pages need a second factor (allauth's TOTP with recovery codes),
logging in asks enrolled users for the code, customers may enrol but are never forced, and
`accounts.mfa.verify_step_up_code` asks for the code again."""

import re
from html import unescape
from urllib.parse import quote

import pytest
from allauth.mfa.models import Authenticator
from django.contrib.auth.models import Group
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from accounts.mfa import verify_step_up_code
from payments.models import LedgerTransaction
from tests.mfa_fixtures import enrol_totp, recovery_codes, totp_code, wrong_code

pytestmark = pytest.mark.django_db

PASSWORD = "correct-horse-battery"
ENROL = reverse("mfa_activate_totp")
GATE_MESSAGE = "Staff pages need a second factor: set up an authenticator app."

OPS_PAGES = [
    reverse("payments:ops_queue"),
    reverse("rental:ops_provisioning"),
    reverse("rental:ops_hosts"),
]
FINANCE_PAGES = [
    reverse("payments:finance_dashboard"),
    reverse("payments:finance_journal"),
    reverse("payments:finance_adjustment"),
]


def staff(make_customer, group: str | None, **fields):
    user = make_customer(**fields)
    if group:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    return user


def logged_in(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def password_login(browser: Client, user):
    return browser.post(reverse("account_login"), {"login": user.email, "password": PASSWORD})


def is_logged_in_as(browser: Client, user) -> bool:
    response = browser.get(reverse("accounts:overview"))
    return response.status_code == 200 and response.context["user"] == user


# --------------------------------------------------------------------------- the staff gate


@pytest.mark.parametrize(
    ("group", "pages"),
    [("operators", OPS_PAGES), ("finance", FINANCE_PAGES)],
    ids=["operators", "finance"],
)
def test_staff_without_a_second_factor_are_sent_to_set_one_up(make_customer, group, pages):
    browser = logged_in(staff(make_customer, group))
    for url in pages:
        response = browser.get(url)
        assert response.status_code == 302, url
        assert response["Location"] == ENROL, url
        assert GATE_MESSAGE in [str(m) for m in get_messages(response.wsgi_request)], url


def test_a_superuser_without_a_second_factor_is_sent_to_set_one_up(make_customer):
    browser = logged_in(make_customer(is_superuser=True, is_staff=True))
    for url in [*OPS_PAGES, *FINANCE_PAGES]:
        response = browser.get(url)
        assert (response.status_code, response["Location"]) == (302, ENROL), url


def test_the_gate_message_is_shown_on_the_enrolment_path(make_customer):
    browser = logged_in(staff(make_customer, "operators"))
    response = browser.get(OPS_PAGES[0], follow=True)
    assert GATE_MESSAGE in response.content.decode()


def test_a_staff_post_without_a_second_factor_changes_nothing(make_customer, customer):
    browser = logged_in(staff(make_customer, "finance"))
    response = browser.post(
        reverse("payments:finance_adjustment"),
        {
            "customer_email": customer.email,
            "direction": "credit",
            "amount": "20.00",
            "reason": "Goodwill",
            "request_key": "6f1c1d0e-8a54-4a55-9a53-0c1e4bdf7b1e",
        },
    )
    assert (response.status_code, response["Location"]) == (302, ENROL)
    assert LedgerTransaction.objects.count() == 0


def test_recovery_codes_alone_do_not_open_staff_pages(make_customer):
    from allauth.mfa.recovery_codes.internal.auth import RecoveryCodes

    user = staff(make_customer, "operators")
    RecoveryCodes.activate(user)
    response = logged_in(user).get(OPS_PAGES[0])
    assert (response.status_code, response["Location"]) == (302, ENROL)


def test_with_an_authenticator_app_the_staff_pages_open(make_customer):
    operator = staff(make_customer, "operators")
    finance = staff(make_customer, "finance")
    enrol_totp(operator)
    enrol_totp(finance)
    for user, pages in ((operator, OPS_PAGES), (finance, FINANCE_PAGES)):
        browser = logged_in(user)
        for url in pages:
            assert browser.get(url).status_code == 200, url


def test_others_are_still_refused_before_any_second_factor_is_asked(make_customer):
    """A customer gets 403, not an invitation to enrol: the gate does not reveal staff pages."""
    browser = logged_in(make_customer())
    for url in [*OPS_PAGES, *FINANCE_PAGES]:
        assert browser.get(url).status_code == 403, url


def test_staff_links_stay_in_the_navigation_and_lead_to_enrolment(make_customer):
    browser = logged_in(staff(make_customer, "finance"))
    html = browser.get(reverse("accounts:overview")).content.decode()
    assert f'href="{reverse("payments:finance_dashboard")}"' in html
    assert f'href="{reverse("mfa_index")}"' in html


# ------------------------------------------------------------------------------ enrolment


def enrol_through_the_pages(browser: Client, user) -> str:
    """What a person does: open the set-up page, confirm the password, scan the secret, type
    the code. Returns the secret the page showed."""
    response = browser.get(ENROL)
    # allauth asks for the password again before a second factor is added or removed
    assert response.status_code == 302
    assert (
        response["Location"] == f"{reverse('account_reauthenticate')}?next={quote(ENROL, safe='')}"
    )
    response = browser.post(response["Location"], {"password": PASSWORD})
    assert (response.status_code, response["Location"]) == (302, ENROL)
    response = browser.get(ENROL)
    assert response.status_code == 200
    html = response.content.decode()
    secret = re.search(r'data-field="totp-secret">([A-Z2-7=]+)<', html).group(1)
    assert 'src="data:image/svg+xml;base64,' in html  # the QR code, allowed by the CSP
    response = browser.post(ENROL, {"code": totp_code(secret)})
    assert response.status_code == 302
    assert response["Location"] == reverse("mfa_view_recovery_codes")
    return secret


def test_an_operator_enrols_with_a_code_from_the_secret_shown(make_customer):
    operator = staff(make_customer, "operators")
    browser = Client()
    assert password_login(browser, operator).status_code == 302
    response = browser.get(OPS_PAGES[0])
    assert (response.status_code, response["Location"]) == (302, ENROL)

    secret = enrol_through_the_pages(browser, operator)

    totp = Authenticator.objects.get(user=operator, type=Authenticator.Type.TOTP)
    assert totp.wrap().instance.data["secret"] == secret  # stored by allauth
    assert Authenticator.objects.filter(
        user=operator, type=Authenticator.Type.RECOVERY_CODES
    ).exists()
    codes_page = browser.get(reverse("mfa_view_recovery_codes")).content.decode()
    assert all(f"<code>{code}</code>" in codes_page for code in recovery_codes(operator))
    assert f'href="{reverse("payments:ops_queue")}"' in codes_page
    assert browser.get(OPS_PAGES[0]).status_code == 200


@pytest.mark.django_db(transaction=True)  # allauth sends it on commit, within the request
def test_the_owner_is_emailed_when_an_authenticator_app_is_added(make_customer):
    """Staff enrol in a session opened with the password alone: if someone else held the
    password and enrolled first, the owner learns it at once."""
    from django.core import mail

    operator = staff(make_customer, "operators")
    browser = Client()
    password_login(browser, operator)
    mail.outbox.clear()

    enrol_through_the_pages(browser, operator)

    (email,) = [m for m in mail.outbox if operator.email in m.to]
    assert "Authenticator App Activated" in email.subject
    assert "Authenticator app activated." in email.body


def test_a_wrong_code_does_not_enrol(make_customer):
    operator = staff(make_customer, "operators")
    browser = logged_in(operator)
    browser.post(browser.get(ENROL)["Location"], {"password": PASSWORD})  # allauth's re-check
    response = browser.get(ENROL)
    secret = re.search(r'data-field="totp-secret">([A-Z2-7=]+)<', response.content.decode())[1]

    response = browser.post(ENROL, {"code": wrong_code(secret)})

    assert response.status_code == 200
    assert "Incorrect code." in response.content.decode()
    assert not Authenticator.objects.filter(user=operator).exists()
    assert browser.get(OPS_PAGES[0])["Location"] == ENROL


def test_the_gate_and_the_enrolment_page_speak_italian(make_customer):
    browser = logged_in(staff(make_customer, "operators"))
    browser.post(reverse("set_language"), {"language": "it", "next": "/"})

    gate = browser.get(OPS_PAGES[0])
    assert [str(m) for m in get_messages(gate.wsgi_request)] == [
        "Le pagine dello staff richiedono un secondo fattore: configura un'app di autenticazione."
    ]
    browser.post(browser.get(ENROL)["Location"], {"password": PASSWORD})  # allauth's re-check
    html = unescape(browser.get(ENROL).content.decode())
    assert "<h1>Configura un'app di autenticazione</h1>" in html
    assert "Codice dell'autenticatore" in html
    assert "Inquadra questo codice QR" in html


# ---------------------------------------------------------------------------------- login


@pytest.fixture
def enrolled_operator(make_customer):
    operator = staff(make_customer, "operators", email="olga@example.com")
    return operator, enrol_totp(operator)


def test_a_password_login_of_an_enrolled_operator_stops_at_the_code(enrolled_operator):
    operator, _secret = enrolled_operator
    browser = Client()

    response = password_login(browser, operator)

    assert response.status_code == 302
    assert response["Location"] == reverse("mfa_authenticate")
    page = browser.get(reverse("mfa_authenticate"))
    assert page.status_code == 200
    assert "Enter the 6-digit code" in page.content.decode()
    assert not is_logged_in_as(browser, operator)
    staff_page = browser.get(OPS_PAGES[0])
    assert staff_page.status_code == 302
    assert staff_page["Location"].startswith(reverse("account_login"))


def test_the_right_code_logs_in(enrolled_operator):
    operator, secret = enrolled_operator
    browser = Client()
    password_login(browser, operator)

    response = browser.post(reverse("mfa_authenticate"), {"code": totp_code(secret)})

    assert response.status_code == 302
    assert is_logged_in_as(browser, operator)
    assert browser.get(OPS_PAGES[0]).status_code == 200


def test_a_wrong_code_does_not_log_in(enrolled_operator):
    operator, secret = enrolled_operator
    browser = Client()
    password_login(browser, operator)

    response = browser.post(reverse("mfa_authenticate"), {"code": wrong_code(secret)})

    assert response.status_code == 200
    assert "Incorrect code." in response.content.decode()
    assert not is_logged_in_as(browser, operator)


def test_a_recovery_code_logs_in_once(enrolled_operator):
    operator, _secret = enrolled_operator
    code = recovery_codes(operator)[0]

    first = Client()
    password_login(first, operator)
    assert first.post(reverse("mfa_authenticate"), {"code": code}).status_code == 302
    assert is_logged_in_as(first, operator)
    assert code not in recovery_codes(operator)

    second = Client()
    password_login(second, operator)
    response = second.post(reverse("mfa_authenticate"), {"code": code})
    assert response.status_code == 200
    assert "Incorrect code." in response.content.decode()
    assert not is_logged_in_as(second, operator)


def test_a_customer_without_a_second_factor_logs_in_with_the_password_alone(customer):
    browser = Client()
    response = password_login(browser, customer)
    assert response.status_code == 302
    assert response["Location"] == reverse("accounts:overview")
    assert is_logged_in_as(browser, customer)


# ------------------------------------------------------------------------------ customers


def test_customers_are_never_forced_but_may_enrol(customer):
    browser = Client()
    password_login(browser, customer)
    for name in ("accounts:overview", "rental:order_list", "payments:statement"):
        response = browser.get(reverse(name))
        assert response.status_code == 200, name
    overview = browser.get(reverse("accounts:overview")).content.decode()
    assert f'href="{reverse("mfa_index")}"' in overview
    assert "Not set up" in browser.get(reverse("mfa_index")).content.decode()

    enrol_through_the_pages(browser, customer)

    assert Authenticator.objects.filter(user=customer, type=Authenticator.Type.TOTP).exists()
    assert browser.get(OPS_PAGES[0]).status_code == 403  # a second factor is not a role


# ------------------------------------------------------------------------------- step-up


def test_a_step_up_takes_a_current_code_once(enrolled_operator):
    operator, secret = enrolled_operator
    code = totp_code(secret)
    assert verify_step_up_code(operator, code) is True
    assert verify_step_up_code(operator, code) is False  # the same code, replayed
    assert verify_step_up_code(operator, wrong_code(secret)) is False
    assert verify_step_up_code(operator, "") is False


def test_a_step_up_takes_a_recovery_code_and_uses_it_up(enrolled_operator):
    operator, _secret = enrolled_operator
    code = recovery_codes(operator)[3]
    assert verify_step_up_code(operator, f" {code} ") is True
    assert code not in recovery_codes(operator)
    assert len(recovery_codes(operator)) == 9
    assert verify_step_up_code(operator, code) is False


def test_a_step_up_never_takes_another_users_code(enrolled_operator, make_customer):
    operator, secret = enrolled_operator
    other = staff(make_customer, "operators")
    enrol_totp(other)
    assert verify_step_up_code(other, totp_code(secret)) is False
    assert verify_step_up_code(other, recovery_codes(operator)[0]) is False
    assert verify_step_up_code(make_customer(), totp_code(secret)) is False
