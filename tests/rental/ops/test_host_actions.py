"""A host's page: adding a worker-managed host (its key fetched at once), the host key fetched
and confirmed, the host check queued, drain, maintenance and return; the last state changes.

The host key comes from a real sshd on loopback (tests/ssh_fixtures.py); the host check over
SSH itself is tested in tests/rental/hosts/, here only what is queued and what is shown."""

import re
import subprocess
from html import unescape

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from rental.hosts import engine
from rental.models import Host, HostState, HostStateChange
from tests.conftest import lots_available

NEW = reverse("rental:ops_host_create")


def host_url(host) -> str:
    return reverse("rental:ops_host", kwargs={"host_id": host.pk})


def action_url(host, action) -> str:
    return reverse("rental:ops_host_action", kwargs={"host_id": host.pk, "action": action})


def section(html: str, name: str) -> str:
    return html.split(f'data-section="{name}"')[1].split("</article>")[0]


def messages_of(response) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def ssh_keygen_fingerprint(host_key: str, tmp_path) -> str:
    """The fingerprint as OpenSSH itself shows it (what the operator reads on the console)."""
    path = tmp_path / "host_key.pub"
    path.write_text(host_key + "\n")
    shown = subprocess.run(
        ["ssh-keygen", "-lf", str(path)], capture_output=True, text=True, check=True
    )
    return shown.stdout.split()[1]


def worker_data(model, **changes) -> dict:
    data = {
        "name": "gpu-h100-20",
        "gpu_model": str(model.pk),
        "cards": "4",
        "management": "worker",
        "ssh_host": "127.0.0.1",
        "ssh_port": "22",
        "ssh_user": "ubuntu",
        "admin_user": "gpuadmin",
        "device_dir": "/dev",
        "gpu_tool": "/usr/bin/nvidia-smi",
        "notes": "",
    }
    data.update(changes)
    return data


@pytest.fixture
def worker_host(catalogue, make_host):
    """A worker-managed H100 host, not checked yet, with its administrative user."""

    def make(**fields) -> Host:
        fields.setdefault("management", "worker")
        fields.setdefault("admin_user", "gpuadmin")
        fields.setdefault("state", HostState.UNCHECKED)
        return make_host(catalogue["h100"], 4, **fields)

    return make


@pytest.fixture
def queued_checks(hold_tasks):
    """The host checks queued, as (host id, make_available, actor id): nothing runs."""
    held = hold_tasks("rental.tasks.host_check")

    class Checks:
        def __eq__(self, other):
            return [args for _name, args in held.rows()] == list(other)

        def __repr__(self):
            return repr([args for _name, args in held.rows()])

    return Checks()


# ------------------------------------------------------------------------- adding a host


def test_a_worker_managed_host_is_added_unchecked_with_its_key_fetched(
    operator_client, catalogue, sshd, tmp_path
):
    before = lots_available(catalogue["h100"])
    response = operator_client.post(
        NEW, worker_data(catalogue["h100"], ssh_port=str(sshd.port)), follow=True
    )
    host = Host.objects.get(name="gpu-h100-20")
    assert response.redirect_chain == [(host_url(host), 302)]
    assert (host.state, host.management, host.admin_user, host.device_dir, host.gpu_tool) == (
        HostState.UNCHECKED,
        "worker",
        "gpuadmin",
        "/dev",
        "/usr/bin/nvidia-smi",
    )
    # The key offered is kept, not pinned: the operator compares it first.
    assert host.host_key_offered.startswith("ssh-ed25519 ")
    assert host.host_key == "" and host.host_key_pinned_at is None
    fingerprint = ssh_keygen_fingerprint(host.host_key_offered, tmp_path)
    html = response.content.decode()
    assert f'data-field="offered-fingerprint">{fingerprint}<' in html
    assert 'data-field="pinned-fingerprint">—<' in html
    assert 'data-action="confirm-key"' in html
    assert any(fingerprint in message for message in messages_of(response))
    assert "Not checked yet" in html
    # Not checked yet: none of its cards is sold.
    assert lots_available(catalogue["h100"]) == before


def test_a_worker_host_that_gives_no_key_is_saved_and_says_so(
    operator_client, catalogue, closed_port
):
    response = operator_client.post(
        NEW, worker_data(catalogue["h100"], ssh_port=str(closed_port)), follow=True
    )
    host = Host.objects.get(name="gpu-h100-20")
    assert response.redirect_chain == [(host_url(host), 302)]
    assert host.state == HostState.UNCHECKED
    assert host.host_key_offered == ""
    warning = [m for m in messages_of(response) if "could not be fetched" in m]
    assert warning and "Fetch it again from this page" in warning[0]
    html = response.content.decode()
    assert 'data-action="fetch-key"' in html
    assert 'data-action="confirm-key"' not in html
    assert "Confirm the host key first." in section(html, "host-check")


def test_a_worker_host_needs_its_administrative_user(operator_client, catalogue):
    response = operator_client.post(NEW, worker_data(catalogue["h100"], admin_user=""))
    assert response.status_code == 400
    assert list(response.context["form"].errors) == ["admin_user"]
    assert "a worker-managed host needs one" in response.content.decode()
    assert not Host.objects.filter(name="gpu-h100-20").exists()


def test_a_host_by_hand_needs_no_administrative_user_and_is_available_at_once(
    operator_client, catalogue
):
    response = operator_client.post(
        NEW, worker_data(catalogue["h100"], management="manual", admin_user="", device_dir="")
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("rental:ops_hosts")
    host = Host.objects.get(name="gpu-h100-20")
    assert (host.state, host.device_dir, host.host_key_offered) == (HostState.AVAILABLE, "/dev", "")


def test_who_prepares_a_host_does_not_change_once_added(operator_client, worker_host):
    host = worker_host()
    html = operator_client.get(host_url(host)).content.decode()
    assert re.search(r'<select name="management"[^>]*\bdisabled\b', html)
    data = worker_data(host.gpu_model, name=host.name, management="manual", notes="Moved")
    assert operator_client.post(host_url(host), data).status_code == 302
    host.refresh_from_db()
    assert (host.management, host.notes, host.state) == ("worker", "Moved", HostState.UNCHECKED)


def test_the_ssh_user_says_who_uses_it(operator_client, catalogue):
    html = operator_client.get(NEW).content.decode()
    assert "customers log in as their own tenant account instead" in html


# ------------------------------------------------------------------------------ host key


def test_fetching_again_keeps_the_key_offered(operator_client, worker_host, sshd, tmp_path):
    host = worker_host(ssh_port=sshd.port)
    response = operator_client.post(action_url(host, "fetch-key"), follow=True)
    assert response.redirect_chain == [(host_url(host), 302)]
    host.refresh_from_db()
    fingerprint = ssh_keygen_fingerprint(host.host_key_offered, tmp_path)
    assert any(fingerprint in message for message in messages_of(response))
    assert host.host_key == ""


def test_a_host_that_does_not_answer_is_a_clear_error(operator_client, worker_host, closed_port):
    host = worker_host(ssh_port=closed_port)
    response = operator_client.post(action_url(host, "fetch-key"))
    assert response.status_code == 400
    html = response.content.decode()
    assert 'data-field="action-error"' in html
    assert Host.objects.get(pk=host.pk).host_key_offered == ""


def test_the_key_is_pinned_when_the_fingerprint_read_on_the_console_matches(
    operator_client, worker_host, sshd, operator, tmp_path
):
    host = worker_host(ssh_port=sshd.port)
    operator_client.post(action_url(host, "fetch-key"))
    host.refresh_from_db()
    fingerprint = ssh_keygen_fingerprint(host.host_key_offered, tmp_path)

    response = operator_client.post(
        action_url(host, "confirm-key"), {"fingerprint": f"  {fingerprint} "}, follow=True
    )

    assert response.redirect_chain == [(host_url(host), 302)]
    host.refresh_from_db()
    assert host.host_key == host.host_key_offered
    assert host.host_key_pinned_by == operator and host.host_key_pinned_at is not None
    html = response.content.decode()
    assert f'data-field="pinned-fingerprint">{fingerprint}<' in html
    assert 'data-action="confirm-key"' not in html  # nothing left to confirm
    assert "ops@example.com" in section(html, "host-key")
    # Now the host check can be run.
    assert 'data-action="check"' in html


@pytest.mark.parametrize(
    ("fingerprint", "status", "message"),
    [
        ("SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 400, "does not match the key"),
        ("", 400, "Type the fingerprint you read on the host's console."),
        ("S" * 101, 400, "A fingerprint has at most 100 characters"),
    ],
)
def test_a_wrong_fingerprint_pins_nothing(
    operator_client, worker_host, sshd, fingerprint, status, message
):
    host = worker_host(ssh_port=sshd.port)
    operator_client.post(action_url(host, "fetch-key"))
    response = operator_client.post(action_url(host, "confirm-key"), {"fingerprint": fingerprint})
    assert response.status_code == status
    html = response.content.decode()
    assert message in unescape(html)
    assert 'role="alert"' in html or 'class="errorlist"' in html
    host.refresh_from_db()
    assert (host.host_key, host.host_key_pinned_at) == ("", None)
    assert f'value="{fingerprint}"' in html or not fingerprint  # what was typed stays


def test_confirming_before_any_key_was_fetched_is_refused(operator_client, worker_host):
    host = worker_host()
    response = operator_client.post(
        action_url(host, "confirm-key"), {"fingerprint": "SHA256:whatever"}
    )
    assert response.status_code == 400
    assert "Fetch the host key first." in response.content.decode()


def test_a_changed_key_confirmed_sends_the_host_back_to_unchecked(
    operator_client, worker_host, sshd, operator, tmp_path
):
    host = worker_host(ssh_port=sshd.port, state=HostState.HOST_KEY_CHANGED)
    Host.objects.filter(pk=host.pk).update(
        host_key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
        state_detail="Host key changed: pinned SHA256:old, offered SHA256:new.",
    )
    html = operator_client.get(host_url(host)).content.decode()
    assert 'data-field="state-detail">Host key changed: pinned SHA256:old' in html
    assert "The host key changed: confirm a key first." in section(html, "host-check")
    operator_client.post(action_url(host, "fetch-key"))
    host.refresh_from_db()
    assert 'data-field="key-differs"' in operator_client.get(host_url(host)).content.decode()
    fingerprint = ssh_keygen_fingerprint(host.host_key_offered, tmp_path)

    operator_client.post(action_url(host, "confirm-key"), {"fingerprint": fingerprint})

    host.refresh_from_db()
    assert host.state == HostState.UNCHECKED
    change = HostStateChange.objects.filter(host=host).latest("pk")
    assert (change.from_status, change.to_status, change.actor) == (
        HostState.HOST_KEY_CHANGED,
        HostState.UNCHECKED,
        operator,
    )


# ----------------------------------------------------------------------------- host check


def pinned(host) -> Host:
    Host.objects.filter(pk=host.pk).update(host_key=KEY, host_key_offered=KEY)
    host.refresh_from_db()
    return host


KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"


@pytest.mark.parametrize(
    ("state", "make_available"),
    [
        (HostState.UNCHECKED, True),
        (HostState.OUT_OF_SERVICE, True),
        (HostState.MAINTENANCE, True),
        (HostState.AVAILABLE, False),
        (HostState.DRAINING, False),
    ],
)
def test_the_host_check_is_queued_and_returns_only_a_host_set_aside(
    operator_client, worker_host, queued_checks, operator, state, make_available
):
    host = pinned(worker_host(state=state))
    response = operator_client.post(action_url(host, "check"), follow=True)
    assert response.redirect_chain == [(host_url(host), 302)]
    assert queued_checks == [(host.pk, make_available, operator.pk)]
    assert any("The host check is queued" in message for message in messages_of(response))
    assert Host.objects.get(pk=host.pk).state == state  # only the check changes it


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"management": "manual"},
            "The worker cannot check a host that operators prepare by hand.",
        ),
        ({"admin_user": ""}, "Give the host an administrative user first."),
        ({"host_key": ""}, "Confirm the host key first."),
        ({"state": HostState.HOST_KEY_CHANGED}, "The host key changed: confirm a key first."),
    ],
)
def test_a_check_that_cannot_run_is_refused_before_it_is_queued(
    operator_client, worker_host, queued_checks, fields, message
):
    host = pinned(worker_host())
    Host.objects.filter(pk=host.pk).update(**fields)
    response = operator_client.post(action_url(host, "check"))
    assert response.status_code == 400
    assert f'data-field="action-error">{message}<' in response.content.decode()
    assert queued_checks == []


def test_the_last_check_and_the_cards_it_read_are_shown(operator_client, worker_host):
    host = pinned(worker_host(state=HostState.OUT_OF_SERVICE))
    cards = [
        {"index": 0, "uuid": "GPU-aaaa", "name": "NVIDIA H100 80GB HBM3", "memory_mib": 81559},
        {"index": 1, "uuid": "GPU-bbbb", "name": "NVIDIA H100 80GB HBM3", "memory_mib": None},
    ]
    Host.objects.filter(pk=host.pk).update(
        cards_seen=cards,
        checked_at=timezone.now(),
        check_passed=False,
        check_detail="2 card(s) read, the host is registered with 4",
    )
    html = section(operator_client.get(host_url(host)).content.decode(), "host-check")
    assert '<span class="error">Failed</span>' in html
    assert 'data-field="check-detail">2 card(s) read, the host is registered with 4<' in html
    assert '<tr data-card="0">' in html and '<tr data-card="1">' in html
    assert "GPU-aaaa" in html and "81559 MiB" in html
    assert "If the check passes, the host becomes available" in html
    Host.objects.filter(pk=host.pk).update(check_passed=True)
    html = section(operator_client.get(host_url(host)).content.decode(), "host-check")
    assert ">Passed<" in html


# ------------------------------------------------------------------- drain, set aside, return


def test_draining_a_host_is_recorded_with_who_and_shown(operator_client, catalogue, operator):
    host = Host.objects.get(name="demo-h200-a")
    before = lots_available(catalogue["h200"])
    response = operator_client.post(action_url(host, "drain"), follow=True)
    assert response.redirect_chain == [(host_url(host), 302)]
    host.refresh_from_db()
    assert host.state == HostState.DRAINING
    assert lots_available(catalogue["h200"]) == before - host.cards
    change = HostStateChange.objects.get(host=host)
    assert (change.from_status, change.to_status, change.actor) == (
        "available",
        "draining",
        operator,
    )
    html = response.content.decode()
    assert 'data-field="state">Draining<' in html
    history = html.split('data-section="host-history"')[1].split("</ol>")[0]
    assert 'data-state="draining"' in history
    assert "Available → Draining" in history and "ops@example.com" in history
    assert 'data-action="drain"' not in html  # already draining
    assert 'data-action="return"' in html


def test_the_history_shows_the_last_ten_changes_newest_first(operator_client, catalogue):
    host = Host.objects.get(name="demo-h200-a")
    for number in range(12):
        action = "maintenance" if number % 2 == 0 else "return"
        assert operator_client.post(action_url(host, action)).status_code == 302
    history = (
        operator_client.get(host_url(host))
        .content.decode()
        .split('data-section="host-history"')[1]
        .split("</ol>")[0]
    )
    assert history.count("<li ") == 10
    assert history.index('data-state="available"') < history.index('data-state="maintenance"')


def test_a_transition_not_allowed_is_refused_and_changes_nothing(operator_client, worker_host):
    host = worker_host(state=HostState.HOST_KEY_CHANGED)
    response = operator_client.post(action_url(host, "drain"))
    assert response.status_code == 400
    assert "A host cannot go from Host key changed to Draining." in response.content.decode()
    assert Host.objects.get(pk=host.pk).state == HostState.HOST_KEY_CHANGED
    assert not HostStateChange.objects.filter(host=host).exists()


def test_a_worker_host_returns_only_through_a_check(operator_client, worker_host):
    host = pinned(worker_host(state=HostState.MAINTENANCE))
    html = operator_client.get(host_url(host)).content.decode()
    assert 'data-action="return"' not in html
    response = operator_client.post(action_url(host, "return"))
    assert response.status_code == 400
    assert "returns only through a passing host check" in response.content.decode()
    assert Host.objects.get(pk=host.pk).state == HostState.MAINTENANCE


def test_a_host_by_hand_shows_no_key_or_check(operator_client, catalogue):
    host = Host.objects.get(name="demo-h200-a")
    html = operator_client.get(host_url(host)).content.decode()
    assert 'data-section="host-key"' not in html
    assert 'data-section="host-check"' not in html
    assert 'data-action="maintenance"' in html and 'data-action="drain"' in html


# ---------------------------------------------------------------------------- refusals


def test_unknown_hosts_and_actions_are_not_found(operator_client, worker_host):
    host = worker_host()
    missing = reverse("rental:ops_host_action", kwargs={"host_id": 999999, "action": "drain"})
    assert operator_client.post(missing).status_code == 404
    missing = reverse("rental:ops_host_action", kwargs={"host_id": 999999, "action": "confirm-key"})
    assert operator_client.post(missing, {}).status_code == 404
    assert operator_client.post(action_url(host, "reboot")).status_code == 404
    assert operator_client.get(action_url(host, "drain")).status_code == 405


def test_only_operators_act_on_hosts(customer_client, finance_client, catalogue):
    host = Host.objects.get(name="demo-h200-a")
    for browser in (customer_client, finance_client):
        assert browser.post(action_url(host, "maintenance")).status_code == 403
    response = Client().post(action_url(host, "maintenance"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))
    assert Host.objects.get(pk=host.pk).state == HostState.AVAILABLE


def test_an_action_without_the_csrf_token_is_refused(operator, catalogue):
    host = Host.objects.get(name="demo-h200-a")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(operator)
    assert browser.post(action_url(host, "maintenance")).status_code == 403
    assert Host.objects.get(pk=host.pk).state == HostState.AVAILABLE


def test_engine_fingerprint_is_what_openssh_shows(sshd, tmp_path):
    """The fingerprint shown (rental.hosts.engine) is the one the operator reads with
    ssh-keygen on the host's console."""
    key = engine.fetch_host_key(sshd.host, sshd.port)
    assert engine.fingerprint(key) == ssh_keygen_fingerprint(key, tmp_path)
