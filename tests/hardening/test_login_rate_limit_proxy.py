"""Failed logins are counted per client, also behind the TLS proxy of the production set-up:
TRUSTED_PROXY_COUNT says how many proxies of ours append to X-Forwarded-For."""

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.cache import caches
from django.test import Client, override_settings
from django.urls import reverse

from accounts.models import User

LOCKED = "Too many failed login attempts"
# allauth's "login_failed" limit per IP address in config/settings/base.py.
FAILURES_PER_IP = 10
PROXY = "10.0.0.2"


def settings_value(name: str, **environment: str) -> subprocess.CompletedProcess:
    """Read one setting the way a fresh process with this environment would."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("TRUSTED_")}
    env.update(environment, DJANGO_SETTINGS_MODULE="config.settings.test")
    return subprocess.run(
        [sys.executable, "-c", f"from django.conf import settings; print(settings.{name})"],
        env=env,
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_trusted_proxy_count_comes_from_the_environment():
    count = "ALLAUTH_TRUSTED_PROXY_COUNT"
    assert settings_value(count).stdout.strip() == "0"
    assert settings_value(count, TRUSTED_PROXY_COUNT="1").stdout.strip() == "1"
    for wrong in ("one", "-1", "١", "1.0", "+1"):
        result = settings_value(count, TRUSTED_PROXY_COUNT=wrong)
        assert result.returncode != 0
        assert "TRUSTED_PROXY_COUNT must be a whole number of proxies, 0 or more" in result.stderr


def fail_to_log_in(browser: Client, times: int, forwarded_for=None) -> None:
    """`times` failed logins, each for another address (so only the per-IP limit can stop
    them), each with the X-Forwarded-For that `forwarded_for(attempt)` gives, if any."""
    for attempt in range(times):
        headers = {"X-Forwarded-For": forwarded_for(attempt)} if forwarded_for else {}
        response = browser.post(
            reverse("account_login"),
            {"login": f"nobody{attempt}@example.com", "password": "wrong"},
            headers=headers,
        )
        assert response.status_code == 200
        assert LOCKED not in response.content.decode()


def log_in(browser: Client, customer: User, **request) -> str:
    response = browser.post(
        reverse("account_login"),
        {"login": customer.email, "password": "correct-horse-battery"},
        **request,
    )
    if "_auth_user_id" in browser.session:
        return "logged in"
    assert LOCKED in response.content.decode()
    return "locked out"


@pytest.fixture
def redis_rate_limits():
    assert type(caches["default"]).__name__ == "RedisCache"


@override_settings(ALLAUTH_TRUSTED_PROXY_COUNT=0)
def test_served_directly_a_spoofed_forwarded_for_does_not_dodge_the_limit(
    redis_rate_limits, make_customer
):
    attacker = Client(REMOTE_ADDR="203.0.113.7")
    fail_to_log_in(attacker, FAILURES_PER_IP, lambda attempt: f"198.51.100.{attempt + 1}")
    spoofed = {"headers": {"X-Forwarded-For": "192.0.2.200"}}
    assert log_in(attacker, make_customer(), **spoofed) == "locked out"
    # Another client, at its own address, is not affected.
    assert log_in(Client(REMOTE_ADDR="203.0.113.8"), make_customer()) == "logged in"


@override_settings(ALLAUTH_TRUSTED_PROXY_COUNT=1)
def test_behind_one_proxy_each_client_has_its_own_bucket(redis_rate_limits, make_customer):
    # Both arrive from the proxy, which appends the address it saw to X-Forwarded-For.
    careless = Client(REMOTE_ADDR=PROXY, headers={"X-Forwarded-For": "198.51.100.1"})
    fail_to_log_in(careless, FAILURES_PER_IP)
    assert log_in(careless, make_customer()) == "locked out"

    other = Client(REMOTE_ADDR=PROXY, headers={"X-Forwarded-For": "198.51.100.2"})
    assert log_in(other, make_customer()) == "logged in"


@override_settings(ALLAUTH_TRUSTED_PROXY_COUNT=1)
def test_behind_one_proxy_a_forged_first_hop_does_not_dodge_the_limit(
    redis_rate_limits, make_customer
):
    # The client sends an X-Forwarded-For of its own; the proxy appends the real address.
    attacker = Client(REMOTE_ADDR=PROXY)
    fail_to_log_in(attacker, FAILURES_PER_IP, lambda attempt: f"192.0.2.{attempt}, 198.51.100.9")
    forged = {"headers": {"X-Forwarded-For": "192.0.2.250, 198.51.100.9"}}
    assert log_in(attacker, make_customer(), **forged) == "locked out"
    neighbour = Client(REMOTE_ADDR=PROXY, headers={"X-Forwarded-For": "198.51.100.10"})
    assert log_in(neighbour, make_customer()) == "logged in"


@override_settings(ALLAUTH_TRUSTED_PROXY_COUNT=0, ALLAUTH_TRUSTED_CLIENT_IP_HEADER="X-Real-IP")
def test_or_a_header_our_proxy_sets_names_the_client(redis_rate_limits, make_customer):
    careless = Client(REMOTE_ADDR=PROXY, headers={"X-Real-IP": "198.51.100.1"})
    fail_to_log_in(careless, FAILURES_PER_IP)
    assert log_in(careless, make_customer()) == "locked out"
    other = Client(REMOTE_ADDR=PROXY, headers={"X-Real-IP": "198.51.100.2"})
    assert log_in(other, make_customer()) == "logged in"
    assert settings_value("ALLAUTH_TRUSTED_CLIENT_IP_HEADER").stdout.strip() == "None"
    header = settings_value(
        "ALLAUTH_TRUSTED_CLIENT_IP_HEADER", TRUSTED_CLIENT_IP_HEADER="X-Real-IP"
    )
    assert header.stdout.strip() == "X-Real-IP"
