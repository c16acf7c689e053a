"""With Redis configured, a logged-in request reads its session from the cache; the database
still holds it, so a flushed cache logs no one out."""

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

pytestmark = pytest.mark.django_db


def _session_queries(client, url) -> tuple[int, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    return response.status_code, [q["sql"] for q in queries if '"django_session"' in q["sql"]]


def test_a_logged_in_page_reads_no_session_row(customer_client):
    assert settings.SESSION_ENGINE == "django.contrib.sessions.backends.cached_db"

    status, session_queries = _session_queries(customer_client, reverse("rental:order_list"))

    assert status == 200
    assert session_queries == []


def test_after_the_cache_is_flushed_the_session_comes_from_the_database(customer_client):
    cache.clear()

    status, session_queries = _session_queries(customer_client, reverse("rental:order_list"))

    assert status == 200  # still logged in
    assert len(session_queries) == 1
    status, session_queries = _session_queries(customer_client, reverse("rental:order_list"))
    assert (status, session_queries) == (200, [])  # and back in the cache


def test_logging_out_ends_the_session_in_both(customer_client):
    session_key = customer_client.session.session_key
    customer_client.post(reverse("account_logout"))

    assert not Session.objects.filter(session_key=session_key).exists()
    response = customer_client.get(reverse("rental:order_list"))
    assert response.status_code == 302
