"""Orders with a pilot, made the real way: paid from the balance (cards allocated), prepared by
an operator, and active once the readiness check saw the test sshd answer. Reports are built per
the diagnostics report contract (or come from the real diagnose.py in the browser test)."""

import copy
import io
import json
import re
import zipfile
from datetime import UTC, datetime

import pytest
from django.urls import reverse

from payments.crypto.services.balance_payment import balance_pay_order
from rental.models import Host, Order, OrderStatus
from rental.services.provisioning import order_mark_prepared, order_set_ssh_key

SSH_KEY = (
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINoy7kXxjevBLm4hN/0T1oA5kiAzczBsDxewpd1quBh2 grace@laptop"
)
TOKEN_PATTERN = re.compile(rb"grk_[A-Za-z0-9_-]{20,}")
STEPS = ("interpreter", "driver", "torch", "compute", "extensions", "peak_memory")


def make_paid(order: Order, capture) -> Order:
    """Pay from the balance; after the commit the cards are allocated (provisioning)."""
    with capture(execute=True):
        balance_pay_order(order_id=order.pk, customer=order.customer)
    order.refresh_from_db()
    return order


def make_active(order: Order, sshd, capture) -> Order:
    """Prepared by an operator with the customer's key; the readiness check (eager, after the
    commit) sees the test sshd answer on every host and starts the rental."""
    Host.objects.filter(allocations__order=order).update(ssh_host=sshd.host, ssh_port=sshd.port)
    order_set_ssh_key(order_id=order.pk, customer=order.customer, key_text=SSH_KEY)
    with capture(execute=True):
        order_mark_prepared(order_id=order.pk, actor=None, access_notes="Ubuntu 24.04, CUDA 12.8")
    order.refresh_from_db()
    assert order.status == OrderStatus.ACTIVE
    return order


@pytest.fixture
def funded(customer, credit):
    credit(customer, "20000.00")
    return customer


@pytest.fixture
def make_order(catalogue, place_order, django_capture_on_commit_callbacks, sshd):
    """make_order(customer, status="active", model="h100", lots=1)."""

    def make(customer, status=OrderStatus.ACTIVE, model="h100", lots=1, **options):
        order = place_order(customer, catalogue[model], lots=lots, **options)
        if status == OrderStatus.AWAITING_PAYMENT:
            return order
        order = make_paid(order, django_capture_on_commit_callbacks)
        assert order.status == OrderStatus.PROVISIONING
        if status == OrderStatus.PROVISIONING:
            return order
        return make_active(order, sshd, django_capture_on_commit_callbacks)

    return make


@pytest.fixture
def active_order(funded, make_order) -> Order:
    return make_order(funded)


@pytest.fixture
def other_customer(make_customer, credit):
    other = make_customer(first_name="Alan", last_name="Turing", email="alan@example.com")
    credit(other, "20000.00")
    return other


def host_of(order: Order) -> str:
    return order.allocations.select_related("host").first().host.name


def build_report(
    order: Order,
    *,
    failed: str | None = None,
    seen: dict | None = None,
    host: str | None = "",
    language: str = "en",
) -> dict:
    """A report of `order` per the contract: steps up to `failed` ok, `failed` failed, the
    rest skipped; peak_memory skipped (no --task). `seen` is what the vendor tool showed (by
    default exactly the order's cards on `host`, the order's first host)."""
    if host == "":
        host = host_of(order)
    on_host = order.allocations.filter(host__name=host, released_at__isnull=True).count()
    cards_here = on_host or order.total_cards
    expected = {
        "model": order.model_name,
        "cards": cards_here,
        "memory_gb_per_card": order.memory_gb_per_card,
        "platform": order.compute_platform,
        "host": host,
    }
    if seen is None:
        seen = {
            "model": f"NVIDIA {order.model_name} HBM3",
            "cards": cards_here,
            "memory_gb_per_card": round(order.memory_gb_per_card * 0.995, 1),
            "platform": order.compute_platform,
        }
    steps, stopped = [], None
    for name in STEPS:
        if stopped:
            steps.append(step(name, "skipped", f"Not run: the step “{stopped}” failed."))
        elif name == failed:
            steps.append(
                step(name, "failed", f"{name} failed", "Check the interpreter before reinstalling.")
            )
            stopped = name
        elif name == "peak_memory":
            steps.append(step(name, "skipped", "No --task given."))
        else:
            steps.append(step(name, "ok", f"{name} passed"))
    ran = [s["name"] for s in steps if s["status"] in ("ok", "failed")]
    from pilot.handover import compare

    driver_ran = "driver" in ran
    return {
        "schema": "gpu-rental/diagnostics-report",
        "schema_version": 1,
        "order": {"id": order.pk, "reference": order.reference},
        "generated_at": datetime(2026, 12, 1, 10, 0, tzinfo=UTC).isoformat(),
        "tool_version": "1.0.0",
        "language": language,
        "host": {
            "hostname": host or "gpu-box",
            "platform": "Linux-6.8.0-x86_64",
            "python": "3.12.3",
        },
        "steps": steps,
        "step_reached": ran[-1],
        "first_error": {"step": failed, "message": f"{failed} failed"} if failed else None,
        "handover": {"expected": expected, "seen": seen, "problems": compare(expected, seen)}
        if driver_ran
        else None,
    }


def step(name, status, detail, advice=""):
    return {"name": name, "status": status, "detail": detail, "advice": advice, "data": {}}


def encode(report: dict) -> bytes:
    return json.dumps(report).encode()


def with_changes(report: dict, **changes) -> dict:
    changed = copy.deepcopy(report)
    changed.update(changes)
    return changed


def issue_token(order: Order) -> str:
    """A kit's upload token, as downloading the diagnostics kit issues it (the live one is
    replaced)."""
    from pilot.services.tokens import kit_token_issue

    return kit_token_issue(order=order)


def download_token(client, order: Order) -> str:
    """Download the order's diagnostics kit and read the upload token it carries."""
    response = client.get(reverse("pilot:kit_diagnostics", kwargs={"order_id": order.pk}))
    assert response.status_code == 200
    with zipfile.ZipFile(io.BytesIO(response.content)) as kit:
        for name in kit.namelist():
            match = TOKEN_PATTERN.search(kit.read(name))
            if match:
                return match.group().decode()
    raise AssertionError("no upload token in the diagnostics kit")


def upload(client, order: Order, body: bytes, token: str | None, **headers):
    if token is not None:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return client.post(
        reverse("pilot:report_upload_api", kwargs={"order_id": order.pk}),
        data=body,
        content_type="application/json",
        **headers,
    )
