"""The host check on real logins: sudo must work and the cards must match the host's model and
card count; what the tenant sees at verification must be exactly its cards."""

import json

import pytest

from rental.hosts import engine
from rental.hosts.localhost import create_account, install_authorized_key, write_cards
from rental.hosts.models import Tenancy, TenancyStatus
from rental.hosts.services import host_check, host_confirm_key, host_fetch_key
from rental.models import Host, HostState, OrderStatus, ProvisioningIssue

pytestmark = pytest.mark.django_db(transaction=True)


def unchecked_host(machine, gpu_model, *, cards: int, admin_user: str, operator) -> Host:
    Host.objects.filter(gpu_model=gpu_model, name__startswith="demo-").delete()
    host = Host.objects.create(
        name=f"lh-{machine.port}", gpu_model=gpu_model, cards=cards, ssh_host=machine.host,
        ssh_port=machine.port, ssh_user="unused", management="worker", admin_user=admin_user,
        device_dir=str(machine.device_dir), gpu_tool=machine.gpu_tool, state=HostState.UNCHECKED,
    )  # fmt: skip
    host_fetch_key(host_id=host.pk)
    host_confirm_key(
        host_id=host.pk, actor=operator, fingerprint=engine.fingerprint(machine.host_key_line)
    )
    return host


def test_a_host_whose_cards_do_not_match_its_registration_is_refused(
    local_host, host_admin, catalogue, operator
):
    machine = local_host(cards=2)
    host = unchecked_host(
        machine, catalogue["h100"], cards=3, admin_user=host_admin.user, operator=operator
    )

    outcome = host_check(host_id=host.pk, actor=operator, make_available=True)

    host.refresh_from_db()
    assert not outcome.passed
    assert "2 card(s) read, the host is registered with 3" in outcome.detail
    assert host.state == HostState.OUT_OF_SERVICE
    assert host.check_passed is False and len(host.cards_seen) == 2


def test_a_host_of_another_model_is_refused(local_host, host_admin, catalogue, operator):
    machine = local_host(cards=1)  # H100 cards
    host = unchecked_host(
        machine, catalogue["h200"], cards=1, admin_user=host_admin.user, operator=operator
    )

    outcome = host_check(host_id=host.pk, actor=operator, make_available=True)

    assert not outcome.passed and "not H200 141 GB" in outcome.detail
    host.refresh_from_db()
    assert host.state == HostState.OUT_OF_SERVICE


def test_a_host_where_sudo_fails_is_refused(
    local_host, host_admin, host_account_prefix, catalogue, operator
):
    machine = local_host(cards=1)
    no_sudo = f"{host_account_prefix}nosudo"
    create_account(no_sudo)
    public = host_admin.private_key_path.with_name(host_admin.private_key_path.name + ".pub")
    install_authorized_key(no_sudo, public.read_text().strip())
    host = unchecked_host(
        machine, catalogue["h100"], cards=1, admin_user=no_sudo, operator=operator
    )

    outcome = host_check(host_id=host.pk, actor=operator, make_available=True)

    assert not outcome.passed and outcome.detail.startswith(f"sudo fails for {no_sudo}")
    host.refresh_from_db()
    assert host.state == HostState.OUT_OF_SERVICE


def test_a_tenant_seeing_other_cards_than_its_own_is_in_front_of_an_operator_at_once(
    register_host, paid_order, catalogue
):
    host, machine = register_host(cards=2)
    # The card behind index 0 is swapped after the host check: another UUID.
    cards = json.loads((machine.root / "cards.json").read_text())
    cards[0]["uuid"] = "GPU-00000000-swapped"
    write_cards(machine.root, cards)

    order = paid_order(catalogue["h100"], lots=1)

    tenancy = Tenancy.objects.get(order=order)
    assert order.status == OrderStatus.PROVISIONING  # never active, the clock never started
    assert order.starts_at is None
    assert tenancy.status == TenancyStatus.VERIFYING
    assert tenancy.attempts == 1  # not retried: an operator decides
    assert "other UUIDs" in tenancy.problem
    assert order.provisioning_issue == ProvisioningIssue.READINESS
    assert host.name in order.provisioning_issue_detail
