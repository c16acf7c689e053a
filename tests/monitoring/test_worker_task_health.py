"""A real Celery worker: the expiry job failing again and again (as beat runs it every 30 s)
is recorded by the worker's task signals and shown to a person on every operators' page,
and in the metrics; once it succeeds again, the banner goes."""

import json
import re

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from prometheus_client.parser import text_string_to_metric_families

from monitoring.models import TaskHealth

pytestmark = pytest.mark.django_db(transaction=True)
EXPIRE = "payments.tasks.expire_payments"
TOKEN = "a-long-random-scrape-token-0123456789abcdef"


@pytest.fixture
def cursor_table_missing():
    """The table the expiry job reads first is gone (as after a deploy whose migration did
    not run): every run of the job fails in the worker. Put back before the test's flush."""
    state = {"missing": False}

    def set_missing(missing: bool) -> None:
        old, new = "payments_chaincursor", "payments_chaincursor_away"
        if missing != state["missing"]:
            source, target = (old, new) if missing else (new, old)
            with connection.cursor() as cursor:
                cursor.execute(f"ALTER TABLE {source} RENAME TO {target}")
            state["missing"] = missing

    try:
        yield set_missing
    finally:
        set_missing(False)


def run_once(workers, worker, *, fails: bool) -> None:
    task_id = workers.send(EXPIRE)
    if fails:
        worker.wait_for_log(
            rf"\[{re.escape(task_id)}\] raised unexpected", timeout=60, what="the job failed"
        )
    else:
        worker.wait_for_task(task_id)


def banner(client: Client) -> str:
    html = client.get(reverse("payments:ops_queue")).content.decode()
    found = re.search(r'<section class="notice ops-alert".*?</section>', html, re.S)
    return found.group(0) if found else ""


def test_an_expiry_job_failing_every_run_is_seen_by_a_person(
    workers, operator_client, cursor_table_missing, settings
):
    settings.METRICS_ENABLED, settings.METRICS_TOKEN = True, TOKEN
    worker = workers.start()
    run_once(workers, worker, fails=False)
    assert TaskHealth.objects.get(task=EXPIRE).successes_total == 1

    cursor_table_missing(True)
    for _ in range(3):
        run_once(workers, worker, fails=True)
    cursor_table_missing(False)

    row = TaskHealth.objects.get(task=EXPIRE)
    assert (row.consecutive_failures, row.failures_total, row.successes_total) == (3, 3, 1)
    assert row.last_error.startswith("ProgrammingError: ")
    assert "payments_chaincursor" in row.last_error
    text = banner(operator_client)
    assert f"Task <code>{EXPIRE}</code> has failed 3 times in a row" in text
    assert f'since <time datetime="{row.failing_since.isoformat()}">' in text
    assert "payments_chaincursor" in text

    scrape = Client(headers={"Authorization": f"Bearer {TOKEN}"}).get("/metrics")
    values = {
        (sample.name, tuple(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(scrape.content.decode())
        for sample in family.samples
    }
    assert values[("gpu_rental_task_failures_total", (("task", EXPIRE),))] == 3
    assert values[("gpu_rental_task_consecutive_failures", (("task", EXPIRE),))] == 3

    run_once(workers, worker, fails=False)
    row.refresh_from_db()
    assert (row.consecutive_failures, row.successes_total, row.failing_since) == (0, 2, None)
    assert banner(operator_client) == ""


def test_the_worker_logs_json_lines_with_log_format_json(workers):
    workers.base_env["LOG_FORMAT"] = "json"
    worker = workers.start()
    task_id = workers.send("payments.tasks.scan_network", ["atlantis"])  # no such network
    worker.wait_for_log(rf"\[{re.escape(task_id)}\] raised unexpected", timeout=60, what="failed")
    entries = [json.loads(line) for line in worker.log().splitlines() if line.startswith('{"time"')]
    ready = [e for e in entries if re.search(r"\bready\.", e["message"])]
    assert ready and ready[0]["level"] == "INFO"
    (failure,) = [e for e in entries if f"{task_id}] raised unexpected" in e["message"]]
    assert failure["level"] == "ERROR" and failure["logger"] == "celery.app.trace"
    assert "KeyError: 'atlantis'" in failure["exc_info"]
    # Every log line is one JSON object (the rest is Celery's start-up banner on stdout).
    assert not [line for line in worker.log().splitlines() if "raised unexpected" in line
                and not line.startswith('{"time"')]  # fmt: skip
