"""The staff roles come with the session's user: one query, and the next request sees a change."""

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.mfa_fixtures import enrol_totp

pytestmark = pytest.mark.django_db


def _get(client, url):
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    return response, [query["sql"] for query in queries]


def test_the_navigation_and_the_guard_read_the_roles_with_the_user(client, make_customer):
    user = make_customer()
    user.groups.add(Group.objects.get_or_create(name="finance")[0])
    enrol_totp(user)
    client.force_login(user)

    response, queries = _get(client, reverse("payments:finance_dashboard"))

    assert response.status_code == 200
    html = response.content.decode()
    assert reverse("payments:finance_dashboard") in html  # the "Finance" link
    assert reverse("payments:ops_queue") not in html  # not an operator
    assert not any('"auth_group"' in sql and "EXISTS" not in sql for sql in queries)
    assert sum('"accounts_user"' in sql and "EXISTS" in sql for sql in queries) == 1


def test_leaving_a_group_takes_effect_on_the_next_request(client, make_customer):
    user = make_customer()
    finance = Group.objects.get_or_create(name="finance")[0]
    user.groups.add(finance)
    enrol_totp(user)
    client.force_login(user)
    assert client.get(reverse("payments:finance_dashboard")).status_code == 200

    user.groups.remove(finance)

    assert client.get(reverse("payments:finance_dashboard")).status_code == 403
    assert reverse("payments:finance_dashboard") not in client.get("/").content.decode()


def test_a_deactivated_user_is_logged_out(client, make_customer):
    user = make_customer()
    client.force_login(user)
    user.is_active = False
    user.save(update_fields=["is_active"])

    response = client.get(reverse("rental:order_list"))

    assert response.status_code == 302
    assert reverse("account_login") in response["Location"]


def test_a_session_made_by_the_previous_backend_still_resolves(client, make_customer):
    user = make_customer()
    client.force_login(user, backend="allauth.account.auth_backends.AuthenticationBackend")

    response = client.get(reverse("rental:order_list"))

    assert response.status_code == 200
