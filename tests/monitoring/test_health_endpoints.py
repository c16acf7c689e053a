"""/healthz and /readyz: unauthenticated, cheap, never redirected or refused for their Host
header, and they name the failing part without telling anything sensitive."""

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from payments.chain.scanning import scan_network
from payments.models import ChainCursor

ROOT = Path(__file__).resolve().parents[2]
DEAD_REDIS = "redis://:s3cret-password@127.0.0.1:8499/0"  # nothing listens on 8499 (our range)


def get(path: str, **headers):
    return Client().get(path, **headers)


def body(response) -> dict:
    assert response["Content-Type"] == "application/json"
    assert response["Cache-Control"] == "no-store"
    return json.loads(response.content)


@pytest.mark.django_db
def test_healthz_answers_without_touching_the_database():
    with CaptureQueriesContext(connection) as queries:
        response = get("/healthz")
    assert response.status_code == 200
    assert body(response) == {"status": "ok"}
    assert len(queries) == 0


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_a_load_balancer_on_plain_http_by_ip_is_neither_redirected_nor_refused(path, settings):
    """As in production: HTTPS redirect on, only the public host allowed; the balancer calls
    the backend's address over http."""
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["gpu.example.com"]
    response = get(path, HTTP_HOST="10.0.3.7:8000")
    assert response.status_code == 200
    # Every other page still is redirected to HTTPS.
    assert get("/", HTTP_HOST="gpu.example.com").status_code == 301


@pytest.mark.django_db
def test_healthz_refuses_a_post():
    assert Client().post("/healthz").status_code == 405
    assert Client().post("/readyz").status_code == 405


@pytest.mark.django_db
def test_readyz_is_ready_with_no_network_enabled():
    response = get("/readyz")
    assert response.status_code == 200
    assert body(response) == {
        "status": "ok",
        "failing": [],
        "checks": {"database": "ok", "cache": "ok", "broker": "ok", "static": "ok"},
    }


@pytest.mark.django_db
def test_readyz_fails_until_the_static_files_are_collected(settings, tmp_path):
    """Production's storage serves from collectstatic's manifest: without it every page is a
    500, and /readyz says so instead of 200."""
    settings.STATIC_ROOT = tmp_path / "staticfiles"
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
    }
    response = get("/readyz")
    assert response.status_code == 503
    assert body(response)["failing"] == ["static"]
    assert str(tmp_path) not in response.content.decode()  # no path leaves the process

    call_command("collectstatic", "--noinput", verbosity=0)
    response = get("/readyz")
    assert response.status_code == 200
    assert body(response)["checks"]["static"] == "ok"


@pytest.mark.django_db
def test_readyz_names_a_broker_that_does_not_answer_and_hides_its_url(settings):
    settings.CELERY_BROKER_URL = DEAD_REDIS
    response = get("/readyz")
    assert response.status_code == 503
    data = body(response)
    assert data["failing"] == ["broker"]
    assert data["checks"]["database"] == data["checks"]["cache"] == "ok"
    assert b"8499" not in response.content and b"s3cret" not in response.content


@pytest.mark.django_db
def test_readyz_names_a_cache_that_does_not_answer(settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": DEAD_REDIS,
        }
    }
    response = get("/readyz")
    assert response.status_code == 503
    assert body(response)["failing"] == ["cache"]
    assert b"s3cret" not in response.content


def test_readyz_names_a_database_that_does_not_answer():
    """A process of its own whose DATABASE_URL points where no PostgreSQL listens."""
    script = (
        "import django, json; django.setup();"
        "from django.test import Client;"
        "r = Client().get('/readyz');"
        "print(r.status_code, r.content.decode())"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": "postgres://postgres:hunter2@127.0.0.1:8498/nothing",
    }
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    status, _, content = done.stdout.strip().splitlines()[-1].partition(" ")
    assert status == "503", done.stderr[-3000:]
    data = json.loads(content)
    assert "database" in data["failing"] and "networks" in data["failing"]
    assert data["checks"]["broker"] == "ok"
    assert "hunter2" not in content and "8498" not in content


# ------------------------------------------------------------------ the networks' watcher


@pytest.mark.django_db
def test_readyz_waits_for_the_first_scan_of_an_enabled_network(chain):
    response = get("/readyz")
    assert response.status_code == 503
    assert body(response)["checks"]["network:local"] == "never-scanned"

    scan_network(network_key="local")

    response = get("/readyz")
    assert response.status_code == 200
    assert body(response)["checks"]["network:local"] == "ok"


@pytest.mark.django_db
def test_readyz_names_a_network_whose_last_scan_is_too_old(chain, settings):
    scan_network(network_key="local")
    settings.WATCHER_MAX_SCAN_AGE_SECONDS = 120
    # The scans stopped three minutes ago (the RPC node went away, say).
    ChainCursor.objects.filter(network="local").update(
        last_scan_at=timezone.now() - timedelta(minutes=3)
    )
    response = get("/readyz")
    assert response.status_code == 503
    data = body(response)
    assert data["failing"] == ["network:local"]
    assert data["checks"]["network:local"] == "stale"


@pytest.mark.django_db
def test_readyz_names_a_network_too_far_behind_its_head(chain, settings):
    settings.WATCHER_MAX_LAG_BLOCKS = 5
    scan_network(network_key="local")
    cursor = ChainCursor.objects.get(network="local")
    assert cursor.last_head == chain.head()
    assert get("/readyz").status_code == 200
    # The last scan saw the head 6 blocks past what it read (a scan that reads in steps).
    ChainCursor.objects.filter(pk=cursor.pk).update(last_head=cursor.next_block - 1 + 6)
    response = get("/readyz")
    assert response.status_code == 503
    assert body(response)["checks"]["network:local"] == "lagging"


@pytest.mark.django_db
def test_readyz_tells_nothing_of_a_failing_rpc_node(chain, dead_rpc_url, settings):
    scan_network(network_key="local")
    ChainCursor.objects.filter(network="local").update(
        last_scan_at=timezone.now() - timedelta(hours=1)
    )
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": dead_rpc_url}
    with pytest.raises(Exception, match="RpcError|ConnectionError|Connection refused"):
        scan_network(network_key="local")
    assert ChainCursor.objects.get(network="local").last_error  # the page will show it
    response = get("/readyz")
    assert response.status_code == 503
    port = dead_rpc_url.rsplit(":", 1)[1].strip("/")
    assert port.encode() not in response.content
    assert b"http" not in response.content
