"""The health page and the banner at 360 px in Chromium: readable without scrolling sideways,
however long the task's name and its error."""

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from playwright.sync_api import expect

from monitoring.models import TaskHealth

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_health_page_and_the_banner_fit_a_phone(new_page, operator, live_server):
    now = timezone.now()
    TaskHealth.objects.create(
        task="payments.tasks.expire_payments",
        consecutive_failures=12,
        failures_total=12,
        failing_since=now - timedelta(minutes=6),
        last_failure_at=now,
        last_error="ProgrammingError: relation_with_a_very_long_name_that_never_wraps_by_itself"
        "_payments_chaincursor_away_and_more does not exist LINE 1: SELECT ...",
    )
    browser_of_operator = Client()
    browser_of_operator.force_login(operator)
    page = new_page(viewport={"width": 360, "height": 780})
    page.context.add_cookies(
        [
            {
                "name": "sessionid",
                "value": browser_of_operator.cookies["sessionid"].value,
                "url": live_server.url,
            }
        ]
    )
    for path in ("/ops/", "/ops/health/", "/ops/hosts/"):
        page.goto(path)
        banner = page.locator('[data-section="ops-alerts"]')
        expect(banner).to_contain_text("has failed 12 times in a row")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), path
        assert page.csp_violations == []
