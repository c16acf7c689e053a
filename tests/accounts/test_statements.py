"""accounts.statements.CompiledQuery: compiled once, run with new values, it builds the instances
the queryset builds (field values with their converters applied, annotations), query after
query; the user with their roles and the customer's order are loaded through it."""

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from accounts.auth_backends import AuthenticationBackend
from accounts.roles import FINANCE, has_role
from accounts.statements import CompiledQuery
from rental import selectors
from rental.models import Host, Order
from tests.conftest import set_stock

pytestmark = pytest.mark.django_db

ANY_MODEL = -7_001  # stands for the GPU model's id while compiling


def values_of(instance) -> dict:
    return {
        field.attname: getattr(instance, field.attname) for field in type(instance)._meta.fields
    }


def test_a_compiled_query_builds_what_the_queryset_builds(catalogue):
    hosts = set_stock(catalogue["h100"], 20)
    Host.objects.filter(pk=hosts[0].pk).update(cards_seen=[{"index": 0, "name": "H100"}])

    def hosts_of(model_id):
        return Host.objects.filter(gpu_model_id=model_id).annotate(twice=F("cards") * 2)

    query = CompiledQuery(hosts_of(ANY_MODEL).order_by("pk"), model=ANY_MODEL)
    expected = list(hosts_of(catalogue["h100"].pk).order_by("pk"))
    for _ in range(3):
        found = query.objects(model=catalogue["h100"].pk)
        assert [values_of(host) for host in found] == [values_of(host) for host in expected]
        assert [host.twice for host in found] == [host.cards * 2 for host in expected]
        assert found[0].cards_seen == [{"index": 0, "name": "H100"}]  # JSON, converted
        assert all(not host._state.adding and host._state.db == "default" for host in found)
    assert query.objects(model=-1) == []
    with pytest.raises(ValueError, match="no parameter"):
        CompiledQuery(hosts_of(ANY_MODEL), other=-7_002)


def test_the_user_with_roles_and_the_order_come_through_compiled_queries(
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
