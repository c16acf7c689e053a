"""The order page through the rental's life: the SSH key, the status that refreshes while the
machines are prepared, the access once active, and what is said once the rental has ended."""

import re
import subprocess
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from playwright.sync_api import expect

from accounts.models import User
from payments.crypto.services.balance_payment import balance_pay_order
from rental.models import Host, HostState, Order, OrderStatus
from rental.services import order_set_status
from rental.services.lifecycle import rentals_tick
from rental.services.provisioning import (
    order_host_not_ready,
    order_mark_prepared,
    order_set_ssh_key,
)
from tests.states import hosts_set_state

ACCESS_NOTES = "Ubuntu 24.04, CUDA 12.8, PyTorch 2.9 in /opt/venv"
PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"

# ------------------------------------------------------------------ helpers (shared with emails)


def generate_key(directory, name: str = "id_ed25519") -> tuple[str, str]:
    """A fresh ed25519 key from ssh-keygen: its .pub line and the fingerprint ssh-keygen lists."""
    path = directory / name
    subprocess.run(
        ["/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "grace@laptop", "-f", path],
        check=True,
    )
    listed = subprocess.run(
        ["/usr/bin/ssh-keygen", "-lf", f"{path}.pub"], check=True, capture_output=True, text=True
    )
    return (directory / f"{name}.pub").read_text().strip(), listed.stdout.split()[1]


def pay(order: Order, capture) -> Order:
    """Pay from the balance (credited beforehand) and run what follows the commit: the cards
    are allocated at once when the hosts have room."""
    with capture(execute=True):
        balance_pay_order(order_id=order.pk, customer=order.customer)
    order.refresh_from_db()
    return order


def prepare(order: Order, sshd, key_line: str, capture, *, check: bool = True) -> Order:
    """Point the order's hosts at the test sshd, give the key, mark the hosts prepared; with
    `check`, the readiness check runs after the commit (tasks are eager) and the order is
    active."""
    Host.objects.filter(allocations__order=order).update(ssh_host=sshd.host, ssh_port=sshd.port)
    if not order.ssh_public_key:
        order_set_ssh_key(order_id=order.pk, customer=order.customer, key_text=key_line)
    with capture(execute=check):
        order_mark_prepared(order_id=order.pk, actor=None, access_notes=ACCESS_NOTES)
    order.refresh_from_db()
    return order


def tick(now, capture) -> None:
    with capture(execute=True):
        rentals_tick(now=now)


# ------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def ssh_key(tmp_path_factory) -> tuple[str, str]:
    return generate_key(tmp_path_factory.mktemp("ssh"))


@pytest.fixture
def funded(customer, credit):
    credit(customer, "5000.00")
    return customer


@pytest.fixture
def provisioning_order(funded, catalogue, place_order, django_capture_on_commit_callbacks):
    order = pay(place_order(funded, catalogue["h100"], lots=2), django_capture_on_commit_callbacks)
    assert order.status == OrderStatus.PROVISIONING
    return order


@pytest.fixture
def active_order(provisioning_order, sshd, ssh_key, django_capture_on_commit_callbacks):
    order = prepare(provisioning_order, sshd, ssh_key[0], django_capture_on_commit_callbacks)
    assert order.status == OrderStatus.ACTIVE
    return order


def page(client, order) -> str:
    response = client.get(reverse("rental:order_detail", kwargs={"order_id": order.pk}))
    assert response.status_code == 200
    return response.content.decode()


def field(html: str, name: str) -> str:
    """The text of the first element carrying data-field=name (tags stripped)."""
    match = re.search(rf'<(\w+)[^>]*data-field="{name}"[^>]*>(.*?)</\1>', html, flags=re.DOTALL)
    assert match, f'no data-field="{name}" on the page'
    return " ".join(re.sub(r"<[^>]+>", " ", match.group(2)).split())


def section(html: str, name: str) -> str:
    start = html.index(f'data-section="{name}"')
    return html[start : html.index("</section>", start)]


def ssh_url(order) -> str:
    return reverse("rental:order_ssh_key", kwargs={"order_id": order.pk})


def status_url(order) -> str:
    return reverse("rental:order_status", kwargs={"order_id": order.pk})


# ------------------------------------------------------------------ the page by status


def test_an_order_awaiting_payment_asks_for_the_ssh_key(
    customer_client, customer, catalogue, place_order
):
    order = place_order(customer, catalogue["h100"])
    html = page(customer_client, order)
    assert field(html, "ssh-key-missing") == (
        "Add your SSH public key: we put it on your account on each host when the host is "
        "prepared; without it you cannot log in."
    )
    assert f'action="{ssh_url(order)}"' in html
    # An account without a saved key is offered to keep this one for the next orders.
    assert re.search(r'<input[^>]*name="save_on_account"[^>]*checked', html)
    assert field(html, "hold").startswith("Lots held until ")
    assert 'hx-trigger="every 10s"' not in html


def test_the_accounts_saved_key_is_on_a_new_order(
    customer_client, customer, catalogue, place_order, ssh_key
):
    line, fingerprint = ssh_key
    User.objects.filter(pk=customer.pk).update(ssh_public_key=line)
    customer.refresh_from_db()
    order = place_order(customer, catalogue["h100"])
    html = page(customer_client, order)
    assert 'data-field="ssh-key-missing"' not in html
    assert fingerprint in field(html, "ssh-key")
    assert "ssh-ed25519" in field(html, "ssh-key")
    assert "Replace the SSH key" in html
    assert not re.search(r'<input[^>]*name="save_on_account"[^>]*checked', html)


def test_a_paid_order_says_the_machines_are_being_prepared_and_polls(
    customer_client, customer, catalogue, place_order
):
    order = place_order(customer, catalogue["h100"])
    order_set_status(order_id=order.pk, to_status=OrderStatus.PAID, actor=None, reason="test")
    html = page(customer_client, order)
    assert field(html, "preparing").startswith("Payment received. Your machines are being prepared")
    assert f'hx-get="{status_url(order)}?since=' in html
    assert 'hx-trigger="every 10s"' in html
    assert 'hx-swap="outerHTML"' in html
    assert 'aria-live="polite"' in html
    assert 'data-field="ssh-key-missing"' in html


def test_a_provisioning_order_polls_until_prepared(customer_client, provisioning_order):
    html = page(customer_client, provisioning_order)
    assert field(html, "status") == "Provisioning"
    assert field(html, "preparing").startswith("Payment received.")
    assert 'hx-trigger="every 10s"' in html
    assert 'data-section="access"' not in html


def test_the_timeline_shows_each_change_with_its_time(customer_client, provisioning_order):
    html = page(customer_client, provisioning_order)
    timeline = section(html, "timeline")
    rows = re.findall(r"<li><time datetime=\"([^\"]+)\">[^<]+</time> — ([^<]+)</li>", timeline)
    assert [label for _when, label in rows] == ["Awaiting payment", "Paid", "Provisioning"]
    assert all(when for when, _label in rows)


def test_prepared_machines_are_checked_before_access_and_the_key_is_fixed(
    customer_client, provisioning_order, sshd, ssh_key, django_capture_on_commit_callbacks
):
    order = prepare(
        provisioning_order, sshd, ssh_key[0], django_capture_on_commit_callbacks, check=False
    )
    assert order.status == OrderStatus.PROVISIONING
    html = page(customer_client, order)
    assert field(html, "readiness") == (
        "Your machines are prepared; we are checking that they answer over SSH before giving "
        "you access."
    )
    assert 'data-field="readiness-delayed"' not in html
    assert 'hx-trigger="every 10s"' in html
    # The key is shown read-only: no form any more.
    assert ssh_key[1] in field(html, "ssh-key")
    assert f'action="{ssh_url(order)}"' not in html
    assert "it can no longer change for this order" in html

    # The worker gave up checking readiness: the order waits for an operator.
    order_host_not_ready(order_id=order.pk, detail="No SSH banner after 3 checks")
    html = page(customer_client, order)
    assert field(html, "readiness-delayed") == (
        "This is taking longer than expected; our operators are on it."
    )


def test_without_free_cards_the_page_says_calmly_that_provisioning_is_delayed(
    customer_client, funded, catalogue, place_order, django_capture_on_commit_callbacks
):
    h100 = catalogue["h100"]
    order = place_order(funded, h100)
    hosts_set_state(Host.objects.filter(gpu_model=h100), HostState.MAINTENANCE)
    order = pay(order, django_capture_on_commit_callbacks)
    assert order.status == OrderStatus.PAID and order.provisioning_delayed
    html = page(customer_client, order)
    notice = field(html, "provisioning-delayed")
    assert "the cards for this order are not free right now" in notice
    assert "Our operators are on it. Your payment is safe" in notice
    assert "you will get an email as soon as your machines are ready" in notice
    assert re.search(r'class="notice" data-field="provisioning-delayed"', html)
    assert 'class="error"' not in html
    assert 'hx-trigger="every 10s"' in html


def test_an_active_order_shows_the_access(customer_client, active_order, sshd, ssh_key):
    html = page(customer_client, active_order)
    assert field(html, "status") == "Active"
    access = section(html, "access")
    assert field(access, "ssh-command") == f"ssh -p {sshd.port} ubuntu@127.0.0.1"
    assert field(access, "cards") == "Cards 1, 2"
    assert field(access, "access-preparation") == "Ubuntu"
    assert field(access, "access-notes") == ACCESS_NOTES
    assert 'class="pre-wrap" data-field="access-notes"' in access
    assert f'datetime="{active_order.starts_at.isoformat()}"' in access
    assert f'datetime="{active_order.ends_at.isoformat()}"' in access
    assert field(access, "preparation-reminder") == (
        "The preparation you chose expresses your need; it does not prove that your project, "
        "its extensions or its licences are already installed. Check the environment you "
        "actually received before starting your processing."
    )
    assert field(access, "backup-advice").startswith(
        "Copy your results to a place you control and re-read the copy, during the rental, "
        "without waiting for its end."
    )
    assert "data left on the hosts is erased" in field(access, "end-notice")
    # Active: the page no longer polls; the key is shown read-only.
    assert 'hx-trigger="every 10s"' not in html
    assert ssh_key[1] in field(html, "ssh-key")
    assert f'action="{ssh_url(active_order)}"' not in html


def test_a_custom_preparation_is_repeated_with_the_access(
    customer_client,
    funded,
    catalogue,
    place_order,
    sshd,
    ssh_key,
    django_capture_on_commit_callbacks,
):
    order = place_order(
        funded, catalogue["h100"], preparation="custom", custom_preparation="JAX 0.7 & Flax"
    )
    order = pay(order, django_capture_on_commit_callbacks)
    order = prepare(order, sshd, ssh_key[0], django_capture_on_commit_callbacks)
    access = section(page(customer_client, order), "access")
    assert field(access, "access-preparation") == "Custom JAX 0.7 &amp; Flax"


def test_an_ended_order_says_what_happened_to_the_data(
    customer_client, active_order, django_capture_on_commit_callbacks
):
    tick(active_order.ends_at, django_capture_on_commit_callbacks)
    html = page(customer_client, active_order)
    assert field(html, "status") == "Ended"
    notice = field(html, "ended-notice")
    assert notice.startswith("This rental ended on ")
    # No promise of erasure: each host below says whether it is still being revoked or when the
    # erasure was verified.
    assert (
        "nothing more is billed. Your access is revoked host by host: below, each host shows "
        "whether it is still being revoked or when the erasure of your data was verified."
    ) in notice
    history = section(html, "access-history")
    host = Host.objects.filter(allocations__order=active_order).first()
    assert host.name in history
    assert "Cards 1, 2" in history
    assert 'data-field="ssh-command"' not in html
    assert "ssh -p" not in html
    assert 'data-section="access"' not in html
    assert 'hx-trigger="every 10s"' not in html
    timeline = section(html, "timeline")
    assert "Active" in timeline and "Ended" in timeline


def test_a_cancelled_order_reads_as_before(customer_client, customer, catalogue, place_order):
    order = place_order(customer, catalogue["h100"])
    customer_client.post(reverse("payments:order_cancel", kwargs={"order_id": order.pk}))
    html = page(customer_client, order)
    assert "This order is cancelled and its lots were released." in html
    assert 'data-section="ssh-key"' not in html
    assert 'hx-trigger="every 10s"' not in html


# ------------------------------------------------------------------ the SSH key form


def test_a_valid_key_is_saved_on_the_order_only(
    customer_client, customer, catalogue, place_order, ssh_key
):
    line, fingerprint = ssh_key
    order = place_order(customer, catalogue["h100"])
    response = customer_client.post(ssh_url(order), {"ssh_public_key": f"\n  {line}\n"})
    assert response.status_code == 302
    assert response["Location"] == reverse("rental:order_detail", kwargs={"order_id": order.pk})
    order.refresh_from_db()
    customer.refresh_from_db()
    assert order.ssh_public_key == line
    assert customer.ssh_public_key == ""
    html = customer_client.get(response["Location"]).content.decode()
    assert f"Your SSH key is saved on order {order.reference}." in html
    assert fingerprint in field(html, "ssh-key")


def test_a_valid_key_is_also_saved_on_the_account_when_asked(
    customer_client, customer, catalogue, place_order, ssh_key
):
    order = place_order(customer, catalogue["h100"])
    response = customer_client.post(
        ssh_url(order), {"ssh_public_key": ssh_key[0], "save_on_account": "on"}
    )
    assert response.status_code == 302
    customer.refresh_from_db()
    order.refresh_from_db()
    assert customer.ssh_public_key == order.ssh_public_key == ssh_key[0]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Paste your SSH public key."),
        (
            PRIVATE_KEY,
            "This is a private key. Never share it: paste the public key, the .pub file.",
        ),
        ("ssh-ed25519", "The key is incomplete: the long part after ssh-ed25519 is missing."),
    ],
)
def test_an_invalid_key_answers_400_next_to_the_field_and_changes_nothing(
    customer_client, customer, catalogue, place_order, ssh_key, text, message
):
    order = place_order(customer, catalogue["h100"])
    order_set_ssh_key(order_id=order.pk, customer=customer, key_text=ssh_key[0])
    response = customer_client.post(
        ssh_url(order), {"ssh_public_key": text, "save_on_account": "on"}
    )
    assert response.status_code == 400
    html = response.content.decode()
    form = html[html.index(f'action="{ssh_url(order)}"') :]
    form = form[: form.index("</form>")]
    errors = form[: form.index("<textarea")]
    assert message in errors.replace("&#x27;", "'")
    assert 'aria-invalid="true"' in form
    textarea = form[form.index("<textarea") : form.index("</textarea>")]
    assert "PRIVATE KEY" not in textarea  # a private key is never written back
    order.refresh_from_db()
    customer.refresh_from_db()
    assert order.ssh_public_key == ssh_key[0]
    assert customer.ssh_public_key == ""


def test_another_customers_order_answers_404(
    customer_client, make_customer, catalogue, place_order, ssh_key
):
    theirs = place_order(make_customer(), catalogue["h100"])
    valid = customer_client.post(ssh_url(theirs), {"ssh_public_key": ssh_key[0]})
    invalid = customer_client.post(ssh_url(theirs), {"ssh_public_key": "nonsense"})
    assert valid.status_code == invalid.status_code == 404
    theirs.refresh_from_db()
    assert theirs.ssh_public_key == ""


def test_the_key_is_locked_once_the_machines_are_prepared(
    customer_client,
    customer,
    provisioning_order,
    sshd,
    ssh_key,
    tmp_path,
    django_capture_on_commit_callbacks,
):
    order = prepare(
        provisioning_order, sshd, ssh_key[0], django_capture_on_commit_callbacks, check=False
    )
    other_line, _fingerprint = generate_key(tmp_path, "other")
    response = customer_client.post(
        ssh_url(order), {"ssh_public_key": other_line, "save_on_account": "on"}
    )
    assert response.status_code == 409
    assert field(response.content.decode(), "error") == (
        "The machines are already prepared with the SSH key given before; it can no longer change."
    )
    order.refresh_from_db()
    customer.refresh_from_db()
    assert order.ssh_public_key == ssh_key[0]
    assert customer.ssh_public_key == ""


def test_the_key_form_needs_csrf_post_and_a_login(customer, catalogue, place_order, ssh_key):
    order = place_order(customer, catalogue["h100"])
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(customer)
    assert strict.post(ssh_url(order), {"ssh_public_key": ssh_key[0]}).status_code == 403
    assert strict.get(ssh_url(order)).status_code == 405
    anonymous = Client().post(ssh_url(order), {"ssh_public_key": ssh_key[0]})
    assert anonymous.status_code == 302
    assert anonymous["Location"].startswith(reverse("account_login"))
    order.refresh_from_db()
    assert order.ssh_public_key == ""


# ------------------------------------------------------------------ the status partial


def test_the_status_partial_polls_while_provisioning(customer_client, provisioning_order):
    response = customer_client.get(status_url(provisioning_order))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html
    assert html.lstrip().startswith('<div id="order-status"')
    assert f'hx-get="{status_url(provisioning_order)}?since=' in html
    assert 'hx-trigger="every 10s"' in html
    assert field(html, "status") == "Provisioning"


def test_the_status_partial_answers_204_while_nothing_changed(
    customer_client, provisioning_order, sshd, ssh_key, django_capture_on_commit_callbacks
):
    html = customer_client.get(status_url(provisioning_order)).content.decode()
    since = re.search(r'\?since=([^"]+)"', html).group(1)
    unchanged = customer_client.get(status_url(provisioning_order) + f"?since={since}")
    assert unchanged.status_code == 204
    assert unchanged.content == b""

    prepare(provisioning_order, sshd, ssh_key[0], django_capture_on_commit_callbacks)
    changed = customer_client.get(status_url(provisioning_order) + f"?since={since}")
    assert changed.status_code == 200
    assert 'data-section="access"' in changed.content.decode()


def test_the_status_partial_stops_polling_and_shows_the_access_once_active(
    customer_client, active_order, sshd, ssh_key
):
    response = customer_client.get(status_url(active_order), headers={"HX-Request": "true"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "hx-trigger" not in html.split('id="order-timeline"')[0]
    assert 'hx-get="' not in html
    assert field(html, "ssh-command") == f"ssh -p {sshd.port} ubuntu@127.0.0.1"
    # Out of band for htmx: the timeline, and the key now shown read-only.
    assert re.search(r'<section id="order-timeline"[^>]*hx-swap-oob="true"', html)
    assert re.search(r'<article id="ssh-key"[^>]*hx-swap-oob="true"', html)
    assert ssh_key[1] in html


def test_the_status_partial_never_swaps_a_key_form_being_typed(customer_client, provisioning_order):
    html = customer_client.get(
        status_url(provisioning_order), headers={"HX-Request": "true"}
    ).content.decode()
    assert 'id="ssh-key"' not in html
    assert "<textarea" not in html


def test_the_status_partial_is_the_customers_own(
    customer_client, client, make_customer, catalogue, place_order, provisioning_order
):
    theirs = place_order(make_customer(), catalogue["h100"])
    assert customer_client.get(status_url(theirs)).status_code == 404
    assert customer_client.post(status_url(provisioning_order)).status_code == 405
    client.logout()
    anonymous = client.get(status_url(provisioning_order))
    assert anonymous.status_code == 302


# ------------------------------------------------------------------ queries


def count_queries(client, order) -> int:
    with CaptureQueriesContext(connection) as queries:
        page(client, order)
    return len(queries)


def test_the_order_page_runs_as_many_queries_for_1_and_10_cards(
    customer_client,
    funded,
    catalogue,
    place_order,
    sshd,
    ssh_key,
    django_capture_on_commit_callbacks,
):
    h100 = catalogue["h100"]
    orders = []
    for lots in (1, 10):
        order = pay(place_order(funded, h100, lots=lots), django_capture_on_commit_callbacks)
        orders.append(prepare(order, sshd, ssh_key[0], django_capture_on_commit_callbacks))
    small, large = orders
    assert large.allocations.values("host").distinct().count() > 1
    # The session comes from the cache (Redis): user with staff groups (navigation), order,
    # timeline, cards with their hosts, the pilot's diagnostics reports and decisions; while
    # active, the order's extensions.
    assert count_queries(customer_client, small) == count_queries(customer_client, large) == 7
    end = max(small.ends_at, large.ends_at) + timedelta(minutes=1)
    tick(end, django_capture_on_commit_callbacks)
    # Ended: no extensions section, but the timeline still lists its extensions' changes.
    assert count_queries(customer_client, small) == count_queries(customer_client, large) == 7


# ------------------------------------------------------------------ in a browser


@pytest.mark.e2e
@pytest.mark.django_db(transaction=True)
def test_the_open_page_turns_active_by_itself(
    new_page, customer, credit, catalogue, place_order, sshd, ssh_key
):
    """htmx polls the status while the machines are prepared; once active the access appears
    and the key form is replaced by the fixed key, without a reload and within the CSP."""
    User.objects.filter(pk=customer.pk).update(ssh_public_key=ssh_key[0])
    customer.refresh_from_db()
    credit(customer, "5000.00")
    order = place_order(customer, catalogue["h100"])
    balance_pay_order(order_id=order.pk, customer=customer)  # commits: cards are allocated
    order.refresh_from_db()
    assert order.status == OrderStatus.PROVISIONING

    page = new_page()
    page.goto("/accounts/login/")
    page.locator("#id_login").fill(customer.email)
    page.locator("#id_password").fill("correct-horse-battery")
    page.get_by_role("button", name="Log in").click()
    page.goto(reverse("rental:order_detail", kwargs={"order_id": order.pk}))
    expect(page.locator('[data-field="status"]')).to_have_text("Provisioning")
    expect(page.locator("#ssh-key textarea")).to_be_visible()

    Host.objects.filter(allocations__order=order).update(ssh_host=sshd.host, ssh_port=sshd.port)
    order_mark_prepared(order_id=order.pk, actor=None, access_notes=ACCESS_NOTES)  # then ready
    order.refresh_from_db()
    assert order.status == OrderStatus.ACTIVE

    expect(page.locator('[data-field="status"]')).to_have_text("Active", timeout=25_000)
    expect(page.locator('[data-field="ssh-command"]')).to_have_text(
        f"ssh -p {sshd.port} ubuntu@127.0.0.1"
    )
    expect(page.locator('[data-section="timeline"]')).to_contain_text("Active")
    expect(page.locator("#ssh-key textarea")).to_have_count(0)
    expect(page.locator('[data-field="ssh-key"]')).to_contain_text(ssh_key[1])
    assert page.locator("[hx-trigger]").count() == 0
    assert page.csp_violations == []
