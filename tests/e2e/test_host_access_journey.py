"""The customer's path on a worker-managed host, in a real browser: pay → the worker prepares
and verifies the account → the page's `ssh` command logs in (run for real) → ended early →
the page says access ended and data erased, with the time it was verified; the same command is
refused."""

import re

import pytest
from playwright.sync_api import expect

from payments.ledger.services.refunds import order_end_early_with_refund
from rental.hosts.models import Tenancy, TenancyStatus
from rental.models import Order, OrderStatus
from tests.host_fixtures import run_page_command

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def log_in(page, email: str) -> None:
    page.goto("/accounts/login/")
    page.locator("#id_login").fill(email)
    page.locator("#id_password").fill("correct-horse-battery")
    page.get_by_role("button", name="Log in").click()


def test_pay_then_log_in_with_the_pages_command_then_refused_after_the_early_end(
    new_page, register_host, customer, customer_key, credit, operator
):
    host, machine = register_host(cards=2)
    customer.ssh_public_key = customer_key.with_suffix(".pub").read_text().strip()
    customer.save(update_fields=["ssh_public_key"])
    credit(customer, "1000.00")

    page = new_page(viewport={"width": 390, "height": 844})  # a phone
    log_in(page, customer.email)
    page.goto("/configure/?gpu_model=h100-80gb&duration_days=3&lots=1&preparation=ubuntu")
    page.get_by_role("button", name="Review order").click()
    page.get_by_role("button", name=re.compile("Confirm order")).click()
    # The tests run tasks right after the commit, in the request: the worker's provisioning
    # and verification (about 10 s on this machine) happen before the answer.
    page.get_by_role("button", name=re.compile("Pay with balance")).click(timeout=90_000)
    page.wait_for_load_state(timeout=90_000)

    order = Order.objects.get()
    tenancy = Tenancy.objects.get(order=order)
    assert order.status == OrderStatus.ACTIVE  # verified as the tenant before the answer
    page.reload()
    expect(page.locator('[data-field="status"]')).to_have_text("Active")
    command = page.locator('[data-field="ssh-command"]').first.inner_text()
    assert command == f"ssh -p {machine.port} {tenancy.account}@{machine.host}"
    expect(page.locator('[data-field="host-state"]').first).to_contain_text("Verified at")

    session = run_page_command(command, customer_key, machine, "nvidia-smi -L")
    assert session.returncode == 0, session.stderr
    assert [line[:6] for line in session.stdout.splitlines()] == [f"GPU {tenancy.cards[0]}:"]

    order_end_early_with_refund(
        order_id=order.pk, actor=operator, reason="Host failure", host_failed=True
    )
    tenancy.refresh_from_db()
    assert tenancy.status == TenancyStatus.ERASED
    page.reload()
    expect(page.locator('[data-field="status"]')).to_have_text("Ended")
    state = page.locator('[data-field="host-state"]').first
    expect(state).to_have_attribute("data-state", "erased")
    expect(state).to_contain_text("Access ended and data erased, verified at")
    expect(state.locator("time")).to_have_attribute(
        "datetime", re.compile(tenancy.erased_at.strftime("%Y-%m-%dT%H:%M"))
    )
    refused = run_page_command(command, customer_key, machine, "true")
    assert refused.returncode == 255 and "Permission denied" in refused.stderr
