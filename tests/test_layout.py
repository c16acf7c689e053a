"""The layout's parts rendered once per process (accounts/templatetags/layout.py): the
navigation for each language and role set, never one visitor's for another."""

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from accounts.roles import FINANCE, OPERATORS


@pytest.fixture
def staff(make_customer):
    def make(*groups):
        user = make_customer()
        for name in groups:
            user.groups.add(Group.objects.get_or_create(name=name)[0])
        return user

    return make


def navigation(client) -> str:
    html = client.get(reverse("rental:configure")).content.decode()
    return html.split("<nav>", 1)[1].split("</nav>", 1)[0]


@pytest.mark.django_db
def test_each_role_set_gets_its_own_navigation_in_turn(client, catalogue, customer, staff):
    finance, operator = staff(FINANCE), staff(OPERATORS)
    seen = []
    for user in (finance, customer, operator, None, finance, customer):
        client.logout()
        if user is not None:
            client.force_login(user)
        seen.append(navigation(client))
    finance_nav, customer_nav, operator_nav, anonymous_nav = seen[:4]
    assert "Finance" in finance_nav and "Operations" not in finance_nav
    assert "Finance" not in customer_nav and "Operations" not in customer_nav
    assert "My orders" in customer_nav and "Log out" in customer_nav
    assert "Operations" in operator_nav and "Finance" not in operator_nav
    assert "Log in" in anonymous_nav and "My orders" not in anonymous_nav
    assert "Log out" not in anonymous_nav
    assert "Finance" in seen[4] and "Finance" not in seen[5]


@pytest.mark.django_db
def test_the_navigation_follows_the_language(customer_client, catalogue):
    assert "My orders" in navigation(customer_client)
    customer_client.post(reverse("set_language"), {"language": "it", "next": "/"})
    italian_nav = navigation(customer_client)
    assert "My orders" not in italian_nav and "I miei ordini" in italian_nav
    customer_client.post(reverse("set_language"), {"language": "en", "next": "/"})
    assert "My orders" in navigation(customer_client)


@pytest.mark.django_db
def test_each_customer_gets_their_own_csrf_token_and_path(client, catalogue, make_customer):
    tokens = set()
    for path in (reverse("rental:configure"), reverse("rental:order_list")):
        client.logout()
        client.force_login(make_customer())
        html = client.get(path).content.decode()
        assert f'name="next" value="{path}"' in html
        tokens.add(html.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0])
    assert len(tokens) == 2
