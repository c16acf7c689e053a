"""accounts.statements.RawStatement: the instances it builds from its kept plan are the ones
`raw()` builds (field values with their converters applied, annotations), query after query;
the user with their roles and the customer's order are loaded through it."""

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.auth_backends import AuthenticationBackend
from accounts.roles import FINANCE, has_role
from accounts.statements import RawStatement
from rental import selectors
from rental.models import Host, Order
from tests.conftest import set_stock

pytestmark = pytest.mark.django_db

HOSTS_SQL = "SELECT *, cards * 2 AS twice FROM rental_host WHERE gpu_model_id = %s ORDER BY id"


def values_of(instance) -> dict:
    return {
        field.attname: getattr(instance, field.attname) for field in type(instance)._meta.fields
    }


def test_kept_plans_build_what_raw_builds(catalogue):
    hosts = set_stock(catalogue["h100"], 20)  # more than one host
    Host.objects.filter(pk=hosts[0].pk).update(cards_seen=[{"index": 0, "name": "H100"}])
    statement = RawStatement(Host, HOSTS_SQL)
    expected = list(Host.objects.raw(HOSTS_SQL, [catalogue["h100"].pk]))
    for _ in range(3):  # the first through raw(), the next from the kept plan
        found = statement.instances([catalogue["h100"].pk])
        assert [values_of(host) for host in found] == [values_of(host) for host in expected]
        assert [host.twice for host in found] == [host.cards * 2 for host in expected]
        assert found[0].cards_seen == [{"index": 0, "name": "H100"}]  # JSON, converted
        assert all(not host._state.adding and host._state.db == "default" for host in found)
    assert statement.instances([-1]) == []


def test_the_user_with_roles_and_the_order_come_through_kept_plans(
    catalogue, customer, place_order
):
    set_stock(catalogue["h100"], 2)
    order = place_order(customer, catalogue["h100"], lots=1)
    customer.groups.add(Group.objects.get_or_create(name=FINANCE)[0])
    backend = AuthenticationBackend()
    for _ in range(2):
        with CaptureQueriesContext(connection) as queries:
            user = backend.get_user(customer.pk)
            assert has_role(user, FINANCE)
        assert len(queries) == 1
        assert values_of(user) == values_of(type(customer).objects.get(pk=customer.pk))
        loaded = selectors.customer_order(customer=customer, order_id=order.pk)
        assert values_of(loaded) == values_of(Order.objects.get(pk=order.pk))
        timeline = [(c.pk, c.to_status) for c in loaded.status_changes.all()]
        assert timeline == [
            (c.pk, c.to_status) for c in order.status_changes.order_by("created_at", "pk")
        ]
