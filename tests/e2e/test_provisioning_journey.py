"""From a paid order to an active one with its access details, in two browsers: the customer's
and an operator's. The hosts point at a real OpenSSH server started by the tests."""

import re

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from rental.models import Host, Order, OrderStatus
from tests.mfa_fixtures import enrol_totp, totp_code

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def log_in(page, email: str, *, totp_secret: str | None = None) -> None:
    page.goto("/accounts/login/")
    page.locator("#id_login").fill(email)
    page.locator("#id_password").fill("correct-horse-battery")
    page.get_by_role("button", name="Log in").click()
    if totp_secret:  # staff: the authenticator app's code comes next
        page.get_by_label("Code").fill(totp_code(totp_secret))
        page.get_by_role("button", name="Log in").click()


def test_a_paid_order_is_prepared_by_an_operator_and_becomes_active_with_its_access(
    new_page, catalogue, customer, make_customer, credit, sshd, tmp_path
):
    Host.objects.filter(gpu_model=catalogue["h100"]).update(ssh_host=sshd.host, ssh_port=sshd.port)
    operator = make_customer(email="olga@example.com", first_name="Olga", is_staff=True)
    operator.groups.add(Group.objects.get_or_create(name="operators")[0])
    operator_secret = enrol_totp(operator)
    credit(customer, "1000.00")
    public_key = (
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINoy7kXxjevBLm4hN/0T1oA5kiAzczBsDxewpd1quBh2 "
        "grace@laptop"
    )

    # The customer orders two H100 lots, pays from the balance and gives an SSH key.
    page = new_page(viewport={"width": 390, "height": 844})  # a phone
    log_in(page, customer.email)
    page.goto("/configure/?gpu_model=h100-80gb&duration_days=7&lots=2&preparation=pytorch")
    page.get_by_role("button", name="Review order").click()
    page.get_by_role("button", name=re.compile("Confirm order")).click()
    page.get_by_role("button", name="Pay with balance · 893.76 USD").click()
    expect(page.locator('[data-field="status"]')).to_have_text("Provisioning")
    expect(page.locator('[data-field="ssh-key-missing"]')).to_be_visible()
    page.get_by_label("SSH public key").fill(public_key)
    page.get_by_role("button", name="Save the SSH key").click()
    expect(page.get_by_role("status")).to_contain_text("Your SSH key is saved")
    expect(page.locator('[data-field="ssh-key"]')).to_contain_text("ssh-ed25519")
    order = Order.objects.get()
    assert order.status == OrderStatus.PROVISIONING
    assert order.ssh_public_key == public_key

    # An operator finds it in the provisioning queue, with its hosts, and marks it prepared.
    ops = new_page()
    log_in(ops, operator.email, totp_secret=operator_secret)
    ops.goto("/ops/provisioning/")
    ops.get_by_role("link", name=order.reference).first.click()
    expect(ops.locator("body")).to_contain_text(public_key)
    expect(ops.locator("body")).to_contain_text("PyTorch")
    ops.get_by_label("Access details for the customer").fill(
        "Ubuntu 24.04, NVIDIA driver 580, CUDA 12.8, PyTorch 2.9 in /opt/venv"
    )
    ops.get_by_role("button", name="Mark prepared").click()
    expect(ops.get_by_role("status")).to_contain_text("marked prepared")

    # The worker saw the SSH banner on every host: the order is active, the page shows access.
    order.refresh_from_db()
    assert order.status == OrderStatus.ACTIVE
    page.reload()
    expect(page.locator('[data-field="status"]')).to_have_text("Active")
    commands = page.locator('[data-field="ssh-command"]')
    expect(commands.first).to_have_text(f"ssh -p {sshd.port} ubuntu@{sshd.host}")
    expect(page.locator('[data-field="access-notes"]')).to_contain_text("PyTorch 2.9 in /opt/venv")
    expect(page.locator('[data-field="access-preparation"]')).to_contain_text("PyTorch")
    expect(page.locator('[data-field="preparation-reminder"]')).to_contain_text(
        "does not prove that your project"
    )
    expect(page.locator('[data-section="timeline"]')).to_contain_text("Active")
    assert page.csp_violations == []
    assert ops.csp_violations == []
