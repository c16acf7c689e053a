"""Task outcomes are recorded by the Celery signals (here with eager tasks: the same signals
a worker sends; tests/monitoring/test_worker_task_health.py runs a real worker), and a task
that keeps failing is named on every operators' page."""

import logging
import re

import pytest
from django.db import connection
from django.urls import reverse

from config.celery_app import app as celery_app
from monitoring.models import TaskHealth
from payments import tasks as payment_tasks
from payments.chain.rpc import RpcError
from payments.chain.scanning import scan_network
from payments.models import ChainCursor
from rental import tasks as rental_tasks

pytestmark = pytest.mark.django_db
SCAN = "payments.tasks.scan_network"
OPS_PAGES = ["payments:ops_queue", "rental:ops_provisioning", "rental:ops_hosts"]


def health(task: str) -> TaskHealth:
    return TaskHealth.objects.get(task=task)


def banner(client, url_name: str = "payments:ops_queue") -> str:
    html = client.get(reverse(url_name)).content.decode()
    found = re.search(r'<section class="notice ops-alert".*?</section>', html, re.S)
    return found.group(0) if found else ""


@pytest.fixture(autouse=True)
def _not_propagating():
    """Eager tasks traced as a worker traces them: an exception is the task's failure (the
    failure signal is sent, retries run), not raised into the test."""
    before = celery_app.conf.task_eager_propagates
    celery_app.conf.task_eager_propagates = False
    yield
    celery_app.conf.task_eager_propagates = before


def run(task, *args):
    return task.delay(*args)


def fail_scan_of_an_unknown_network() -> None:
    result = run(payment_tasks.scan_network, "atlantis")
    assert result.failed() and isinstance(result.result, KeyError)


def test_a_success_is_recorded():
    assert run(payment_tasks.expire_payments).successful()
    row = health("payments.tasks.expire_payments")
    assert (row.consecutive_failures, row.successes_total, row.failures_total) == (0, 1, 0)
    assert row.last_success_at is not None and row.failing_since is None


def test_failures_in_a_row_are_counted_from_the_first_and_a_success_ends_them(chain):
    for _ in range(3):
        fail_scan_of_an_unknown_network()
    row = health(SCAN)
    assert row.consecutive_failures == row.failures_total == 3
    assert row.last_error == "KeyError: 'atlantis'"
    assert row.failing_since is not None and row.failing_since < row.last_failure_at
    first_failure = row.failing_since

    fail_scan_of_an_unknown_network()
    assert health(SCAN).failing_since == first_failure  # still the same streak

    assert run(payment_tasks.scan_network, "local").successful()
    row = health(SCAN)
    assert (row.consecutive_failures, row.failures_total, row.successes_total) == (0, 4, 1)
    assert row.failing_since is None


def test_each_retried_attempt_counts_as_a_failure(chain, dead_rpc_url, settings):
    """The scan retries RPC errors 5 times (eagerly: at once) before it fails."""
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": dead_rpc_url}
    result = run(payment_tasks.scan_network, "local")
    assert isinstance(result.result, RpcError)
    row = health(SCAN)
    assert row.consecutive_failures == 6  # five retries, then the failure
    assert row.last_error.startswith("RpcError: ")
    assert "Connection" in ChainCursor.objects.get(network="local").last_error


def test_the_banner_names_the_task_its_count_its_last_error_and_since_when(operator_client, chain):
    fail_scan_of_an_unknown_network()
    fail_scan_of_an_unknown_network()
    scan_network(network_key="local")  # the network's banner: it was never scanned
    assert banner(operator_client) == ""  # two in a row: under the threshold of three

    fail_scan_of_an_unknown_network()
    row = health(SCAN)
    for url_name in OPS_PAGES:
        text = banner(operator_client, url_name)
        assert f"Task <code>{SCAN}</code> has failed 3 times in a row" in text
        assert f'since <time datetime="{row.failing_since.isoformat()}">' in text
        assert "KeyError: &#x27;atlantis&#x27;" in text
    html = operator_client.get(reverse("monitoring:ops_health")).content.decode()
    assert f"Task <code>{SCAN}</code> has failed 3 times in a row" in html

    assert run(payment_tasks.scan_network, "local").successful()
    assert banner(operator_client) == ""


def test_the_threshold_is_a_setting(operator_client, settings):
    settings.TASK_FAILURE_ALERT_THRESHOLD = 1
    fail_scan_of_an_unknown_network()
    assert "has failed 1 time in a row" in banner(operator_client)


def test_the_banner_is_in_italian_for_an_italian_operator(operator_client):
    for _ in range(3):
        fail_scan_of_an_unknown_network()
    operator_client.post(reverse("set_language"), {"language": "it", "next": "/ops/"})
    text = banner(operator_client)
    assert "Richiede attenzione" in text
    assert f"L'attività <code>{SCAN}</code> non è riuscita 3 volte di seguito" in text


def test_a_task_whose_outcome_cannot_be_recorded_still_succeeds(
    caplog, customer, catalogue, place_order, mailoutbox
):
    """The record's table is gone (a deploy that has not migrated yet): the task's result is
    unchanged, nothing raises, the transaction around it is intact, and the log says why."""
    order = place_order(customer, catalogue["h100"])
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE monitoring_taskhealth RENAME TO monitoring_taskhealth_away")
    with caplog.at_level(logging.ERROR, logger="monitoring.signals"):
        result = run(rental_tasks.order_email, order.pk, "payment_received")
    assert result.successful() and result.result is True  # the email went out as ever
    assert len(mailoutbox) == 1
    assert "the outcome of task rental.tasks.order_email could not be recorded" in caplog.text
    customer.refresh_from_db()  # the test's transaction still works
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE monitoring_taskhealth_away RENAME TO monitoring_taskhealth")
    assert not TaskHealth.objects.exists()
