"""Issue 23, F3: a write to an address under /api/ that nothing serves (`/api/v1/orders` without
its slash, a negative id) answered Django's HTML "CSRF verification failed" 403, before the
API's own problem+json 404 could answer. Nothing is done there, so nothing needs CSRF's
protection: the answer is the 404 problem, with or without a session."""

import json

import pytest
from django.test import Client

PATHS = ["/api/v1/orders", "/api/v1/orders/-1/cancel/", "/api/v2/anything/"]


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
@pytest.mark.parametrize("path", PATHS)
def test_a_write_to_an_unrouted_api_address_is_a_404_problem(customer, method, path):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(customer)  # a session: CSRF's check applies to it

    response = getattr(browser, method)(path, data="{}", content_type="application/json")

    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/problem+json")
    assert json.loads(response.content)["status"] == 404
