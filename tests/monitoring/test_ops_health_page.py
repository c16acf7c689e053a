"""/ops/health/: each enabled network's last scan, head, lag and last error (an RPC URL never
shown), and every task's record; for operators only, in a fixed number of queries."""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from monitoring.models import TaskHealth
from payments.chain.networks import get_network
from payments.chain.rpc import RpcError
from payments.chain.scanning import scan_network
from payments.models import ChainCursor

pytestmark = pytest.mark.django_db
URL = reverse("monitoring:ops_health")


def local_name() -> str:
    return str(get_network("local").name)


def row(html: str, attribute: str, value: str) -> str:
    found = re.search(rf'<tr {attribute}="{re.escape(value)}">(.*?)</tr>', html, re.S)
    assert found, f"no row {attribute}={value}"
    return found.group(1)


def field(row_html: str, name: str) -> str:
    found = re.search(rf'data-field="{name}"[^>]*>(.*?)</td>', row_html, re.S)
    assert found, f"no field {name}"
    return re.sub(r"<[^>]+>", " ", found.group(1)).strip()


def test_the_page_is_for_operators_only(customer_client):
    assert Client().get(URL).status_code == 302  # to the login page
    assert customer_client.get(URL).status_code == 403


def test_a_scanned_network_shows_its_last_scan_head_and_lag(operator_client, chain):
    chain.mine(5)
    scan_network(network_key="local")
    cursor = ChainCursor.objects.get(network="local")
    html = operator_client.get(URL).content.decode()
    network = row(html, "data-network", "local")
    assert field(network, "head") == str(chain.head())
    assert field(network, "read-to") == str(cursor.next_block - 1) == str(chain.head() - 1)
    assert field(network, "lag") == "1"
    assert "Scanning normally." in field(network, "state")
    assert field(network, "last-error") == "—"
    assert 'data-section="ops-alerts"' not in html


def test_a_failing_scan_shows_its_error_without_the_rpc_url(operator_client, chain, settings):
    scan_network(network_key="local")
    # The provider's URL carries an API key, as hosted RPC URLs do; nothing listens there.
    secret_url = "http://127.0.0.1:8497/v3/0123456789abcdef-api-key"
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": secret_url}
    with pytest.raises(RpcError):
        scan_network(network_key="local")
    cursor = ChainCursor.objects.get(network="local")
    assert "8497" in cursor.last_error and cursor.last_error_at is not None
    html = operator_client.get(URL).content.decode()
    error = field(row(html, "data-network", "local"), "last-error")
    assert "Connection" in error
    assert "api-key" not in html and "8497/v3" not in html
    # The last successful scan and its figures stay on the page.
    assert field(row(html, "data-network", "local"), "lag") == "1"

    # Two minutes and more without a successful scan: every operators' page says so.
    ChainCursor.objects.filter(pk=cursor.pk).update(
        last_scan_at=timezone.now() - timedelta(minutes=3)
    )
    for url in (URL, reverse("payments:ops_queue"), reverse("rental:ops_hosts")):
        html = operator_client.get(url).content.decode()
        LOCAL = local_name()
        banner = re.search(r'data-section="ops-alerts".*?</section>', html, re.S).group(0)
        assert f"The watcher last scanned {LOCAL} 3\xa0minutes ago." in banner
        assert "Connection" in banner and "api-key" not in banner

    # The node answers again: the next scan clears the error and the banner.
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": chain.rpc_url}
    scan_network(network_key="local")
    cursor.refresh_from_db()
    assert cursor.last_error == "" and cursor.last_error_at is None
    html = operator_client.get(URL).content.decode()
    assert field(row(html, "data-network", "local"), "last-error") == "—"
    assert 'data-section="ops-alerts"' not in html


def test_a_network_never_scanned_is_in_the_banner(operator_client, chain):
    LOCAL = local_name()
    html = operator_client.get(reverse("payments:ops_queue")).content.decode()
    assert f"The watcher has never scanned {LOCAL}." in html


def test_tasks_are_listed_failing_first(operator_client, settings):
    now = timezone.now()
    TaskHealth.objects.create(
        task="payments.tasks.reconcile_daily", successes_total=4, last_success_at=now
    )
    TaskHealth.objects.create(
        task="payments.tasks.expire_payments",
        consecutive_failures=2,
        failures_total=2,
        failing_since=now - timedelta(minutes=1),
        last_failure_at=now,
        last_error="OperationalError: the database is gone",
    )
    html = operator_client.get(URL).content.decode()
    tasks = re.findall(r'<tr data-task="([^"]+)">', html)
    assert tasks == ["payments.tasks.expire_payments", "payments.tasks.reconcile_daily"]
    expire = row(html, "data-task", "payments.tasks.expire_payments")
    assert field(expire, "consecutive-failures") == "2"
    assert "OperationalError: the database is gone" in expire
    # Under the threshold (3): no banner yet.
    assert 'data-section="ops-alerts"' not in html


def test_the_page_runs_a_fixed_number_of_queries(operator_client, chain):
    scan_network(network_key="local")

    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert operator_client.get(URL).status_code == 200
        return len(queries)

    TaskHealth.objects.create(task="task-0", consecutive_failures=5)
    with_one = count()
    for number in range(1, 20):
        TaskHealth.objects.create(task=f"task-{number}", consecutive_failures=5)
    # The session comes from the cache (Redis): user with groups; cursors; tasks; the
    # outbox's backlog; the banner's one query.
    assert with_one == count() == 5


def test_the_page_fits_a_phone(operator_client):
    html = operator_client.get(URL).content.decode()
    # Nothing to list yet: only the queues' table (always one row per queue).
    assert html.count('class="table-scroll"') == 1
    TaskHealth.objects.create(task="payments.tasks.expire_payments")
    html = operator_client.get(URL).content.decode()
    assert html.count('class="table-scroll"') == 2


def test_a_network_far_behind_its_head_is_in_the_banner(operator_client, chain, settings):
    settings.WATCHER_MAX_LAG_BLOCKS = 5
    scan_network(network_key="local")
    cursor = ChainCursor.objects.get(network="local")
    ChainCursor.objects.filter(pk=cursor.pk).update(last_head=cursor.next_block - 1 + 7)
    html = operator_client.get(reverse("rental:ops_provisioning")).content.decode()
    assert f"The watcher of {local_name()} is 7 blocks behind the head." in html
    html = operator_client.get(URL).content.decode()
    assert field(row(html, "data-network", "local"), "lag") == "7"
