"""The README's verification snippets, taken from README.md as they are, run against a real
delivery: the Python one (the standardwebhooks library) and the Node.js one (its standard
library only, run with `node`). A tampered id, body or timestamp, or another secret, fails both,
so the README cannot rot."""

import base64
import json
import re
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from api.webhooks import signing
from outbox import events

pytestmark = pytest.mark.django_db

README = Path(settings.BASE_DIR) / "README.md"
NODE = shutil.which("node")  # installed with the project (npm's anvil needs it)


def snippet(language: str) -> str:
    section = README.read_text().split("**Webhooks** (`/account/webhooks/`", 1)[1]
    section = section.split("**Walkthrough", 1)[0]
    (code,) = re.findall(rf"```{language}\n(.*?)```", section, re.DOTALL)
    return code


NODE_DRIVER = """
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const cases = JSON.parse(input);
  const results = cases.map(({ secret, headers, body }) =>
    verifyWebhook(secret, headers, Buffer.from(body, "base64"))
  );
  process.stdout.write(JSON.stringify(results));
});
"""


@pytest.fixture
def delivery(customer, receiver, endpoint_for, credit, django_capture_on_commit_callbacks):
    """(secret, body, headers with lower-case names) of a real delivery to the receiver."""
    endpoint = endpoint_for(customer, events=[events.BALANCE_CREDITED])
    with django_capture_on_commit_callbacks(execute=True):
        credit(customer, "12.34")
    (request,) = receiver.received
    headers = {name.lower(): value for name, value in request.headers.items()}
    return endpoint.secret, request.body, headers


def variants(secret: str, body: bytes, headers: dict) -> list[tuple[str, bytes, dict]]:
    """The delivery as received, then tampered: id, body, timestamp, another secret."""
    stale = str(int(headers["webhook-timestamp"]) - 1)
    return [
        (secret, body, headers),
        (secret, body, {**headers, "webhook-id": str(uuid.uuid4())}),
        (secret, body.replace(b"12.34", b"99.99"), headers),
        (secret, body, {**headers, "webhook-timestamp": stale}),
        (signing.new_secret(), body, headers),
    ]


EXPECTED = [True, False, False, False, False]


def test_the_readme_python_snippet_verifies_a_delivery_and_refuses_tampered_ones(delivery):
    namespace: dict = {}
    exec(snippet("python"), namespace)  # noqa: S102 - the README's own code

    results = [
        namespace["handle"](secret, body, headers) for secret, body, headers in variants(*delivery)
    ]

    assert results[0]["type"] == "balance.credited"
    assert results[0]["data"]["credit"]["amount_usd"] == "12.34"
    assert [result is not None for result in results] == EXPECTED


def test_the_readme_node_snippet_verifies_a_delivery_and_refuses_tampered_ones(delivery, tmp_path):
    script = tmp_path / "verify.js"
    script.write_text(snippet("js") + NODE_DRIVER)
    cases = [
        {"secret": secret, "headers": headers, "body": base64.b64encode(body).decode()}
        for secret, body, headers in variants(*delivery)
    ]

    assert NODE, "node is not installed"
    run = subprocess.run(  # noqa: S603
        [NODE, str(script)], input=json.dumps(cases), capture_output=True, text=True, timeout=30
    )

    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == EXPECTED
