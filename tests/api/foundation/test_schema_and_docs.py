"""The OpenAPI schema validates; the docs page loads only our own static files."""

import json
import re
import subprocess
import sys

import yaml
from django.conf import settings
from django.contrib.staticfiles import finders
from openapi_spec_validator import validate

from tests.api.contract import openapi_schema


def test_the_served_schema_is_valid_openapi(client, db):  # db: its examples read the catalogue
    response = client.get("/api/v1/schema/?format=json")
    assert response.status_code == 200
    document = json.loads(response.content)
    validate(document)
    assert document["openapi"].startswith("3.1")
    assert document["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    assert "Problem" in document["components"]["schemas"]
    quote = document["paths"]["/api/v1/quote/"]["post"]
    assert quote["responses"]["400"]["content"]["application/problem+json"]["schema"] == {
        "$ref": "#/components/schemas/Problem"
    }
    assert any(p["name"] == "Idempotency-Key" for p in quote["parameters"])
    # YAML by default.
    assert yaml.safe_load(client.get("/api/v1/schema/").content)["openapi"].startswith("3.1")


def test_every_post_declares_the_idempotency_key_and_problems():
    for path, operations in openapi_schema()["paths"].items():
        for method, operation in operations.items():
            responses = operation["responses"]
            for status, response in responses.items():
                if status.startswith(("4", "5")):
                    assert list(response["content"]) == ["application/problem+json"], (path, status)
            if method == "post":
                names = [p["name"] for p in operation.get("parameters", [])]
                assert "Idempotency-Key" in names, path
                assert {"400", "401", "403", "409", "422", "429"} <= set(responses), path


def test_spectacular_validates_without_warnings():
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "spectacular",
            "--validate",
            "--fail-on-warn",
            "--file",
            "/dev/null",
        ],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_docs_page_loads_its_files_from_our_static(client):
    response = client.get("/api/v1/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources
    assert not [s for s in sources if re.match(r"(https?:)?//", s)], sources
    scripts = re.findall(r"<script[^>]*>(.*?)</script>", html, flags=re.S)
    assert scripts and all(body.strip() == "" for body in scripts)  # no inline script
    assert all("src=" in tag for tag in re.findall(r"<script[^>]*>", html))
    for path in (
        "vendor/swagger-ui/swagger-ui-bundle.js",
        "vendor/swagger-ui/swagger-ui.css",
        "js/api-docs.js",
    ):
        assert f"/static/{path}" in html
        assert finders.find(path), path
    assert 'data-schema-url="/api/v1/schema/?format=json"' in html
    assert "script-src 'self'" in response["Content-Security-Policy"]
