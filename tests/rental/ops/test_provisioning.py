"""The provisioning queue and one order's page: allocate, mark prepared, check SSH again."""

import re

import pytest
from django.core import mail
from django.template.defaultfilters import date as date_filter
from django.urls import reverse

from rental.models import (
    CardAllocation,
    Host,
    HostState,
    Order,
    OrderStatus,
    OrderStatusChange,
    Preparation,
    ProvisioningIssue,
)
from tests.states import hosts_set_state

from .conftest import SSH_KEY, SSH_KEY_FINGERPRINT, give_key

QUEUE = reverse("rental:ops_provisioning")
NOTES = "Ubuntu 24.04, driver 570, CUDA 12.8, PyTorch 2.7 in /opt/venv. Data disk on /data."


def order_url(order) -> str:
    return reverse("rental:ops_order", kwargs={"order_id": order.pk})


def action_url(order, action) -> str:
    return reverse("rental:ops_order_action", kwargs={"order_id": order.pk, "action": action})


def section(html: str, name: str) -> str:
    return html.split(f'data-section="{name}"')[1].split("</section>")[0]


def order_hosts(order):
    return Host.objects.filter(allocations__order=order).distinct()


@pytest.fixture
def prepare(operator_client, django_capture_on_commit_callbacks):
    """Mark the order prepared; the readiness task runs right after the commit."""

    def post(order, notes=NOTES, **kwargs):
        data = {"access_notes": notes, "key_fingerprint": shown_fingerprint(order)}
        with django_capture_on_commit_callbacks(execute=True):
            return operator_client.post(action_url(order, "prepare"), data)

    def shown_fingerprint(order) -> str:
        """What the order page's prepare form carries: the key the operator sees."""
        html = operator_client.get(order_url(order)).content.decode()
        found = re.search(r'name="key_fingerprint" value="([^"]*)"', html)
        return found.group(1) if found else ""

    return post


def test_a_key_replaced_after_the_page_was_loaded_is_not_marked_prepared(
    operator_client, provisioning_order
):
    html = operator_client.get(order_url(provisioning_order)).content.decode()
    seen = re.search(r'name="key_fingerprint" value="([^"]*)"', html).group(1)
    assert seen == SSH_KEY_FINGERPRINT
    Order.objects.filter(pk=provisioning_order.pk).update(
        ssh_public_key="ssh-ed25519 "
        "AAAAC3NzaC1lZDI1NTE5AAAAINoy7kXxjevBLm4hN/0T1oA5kiAzczBsDxewpd1quBh2 new@laptop"
    )

    response = operator_client.post(
        action_url(provisioning_order, "prepare"),
        {"access_notes": NOTES, "key_fingerprint": seen},
    )

    assert response.status_code == 400
    assert "The customer replaced the SSH key after this page was loaded" in (
        response.content.decode()
    )
    order = Order.objects.get(pk=provisioning_order.pk)
    assert (order.prepared_at, order.access_notes) == (None, "")


# ------------------------------------------------------------------------------ queue


def test_each_section_lists_its_orders(
    operator_client, catalogue, customer, place_order, pay, provisioning_order, waiting_order
):
    no_key = pay(place_order(customer, catalogue["b200"], lots=1))
    html = operator_client.get(QUEUE).content.decode()
    assert f'href="{QUEUE}" aria-current="page"' in html

    waiting = section(html, "waiting-for-cards")
    assert "Waiting for cards (1)" in waiting
    assert waiting_order.reference in waiting
    assert order_url(waiting_order) in waiting
    assert "grace@example.com" in waiting
    assert "H200 141 GB" in waiting
    assert "1 × 1" in waiting
    paid_at = OrderStatusChange.objects.get(order=waiting_order, to_status=OrderStatus.PAID)
    assert f'<time datetime="{date_filter(paid_at.created_at, "c")}">' in waiting
    assert "free on available hosts: 0 card(s) on 0 host(s)" in waiting
    assert provisioning_order.reference not in waiting

    to_prepare = section(html, "to-prepare")
    assert "To prepare (2)" in to_prepare
    assert provisioning_order.reference in to_prepare
    assert no_key.reference in to_prepare
    row = to_prepare.split(f'data-order="{provisioning_order.pk}"')[1].split("</tr>")[0]
    assert "2 × 1" in row and "2 cards in all" in row
    assert "Ubuntu" in row
    host = order_hosts(provisioning_order).get()
    assert f"{host.name}: 2 cards" in row
    assert "Given (ssh-ed25519)" in row
    row = to_prepare.split(f'data-order="{no_key.pk}"')[1].split("</tr>")[0]
    assert "1 × 2" in row
    assert "Waiting for the customer's SSH key" in row
    assert waiting_order.reference not in to_prepare

    for empty, sentence in (
        ("checking", "No readiness check is running."),
        ("ssh-failed", "Every checked host answered."),
        ("active", "No rental is active."),
    ):
        assert sentence in section(html, empty)


def test_the_empty_queue_says_so(operator_client, db):
    html = operator_client.get(QUEUE).content.decode()
    assert "No paid order is waiting for cards." in html
    assert "No order is waiting to be prepared." in html
    assert "Waiting for cards (0)" in html


def test_custom_preparation_is_shortened_in_the_queue_and_whole_on_the_page(
    operator_client, catalogue, customer, place_order, pay
):
    text = "\n".join(["Install CUDA 12.4, cuDNN 9, JAX 0.4.30 and our wheel from the bucket."] * 4)
    order = give_key(
        pay(
            place_order(
                customer,
                catalogue["h100"],
                preparation=Preparation.CUSTOM,
                custom_preparation=text,
            )
        )
    )
    queue = section(operator_client.get(QUEUE).content.decode(), "to-prepare")
    assert "Custom" in queue
    assert text[:60] in queue
    assert text not in queue
    page = operator_client.get(order_url(order)).content.decode()
    assert f'data-field="custom-preparation">{text}</pre>' in page


# ------------------------------------------------------------------------ order page


def test_the_order_page_shows_what_the_operator_needs(operator_client, provisioning_order):
    response = operator_client.get(order_url(provisioning_order))
    assert response.status_code == 200
    html = response.content.decode()
    assert provisioning_order.reference in html
    assert (
        'data-field="customer">Grace Hopper · <span class="break-anywhere">grace@example.com'
        in html
    )
    assert 'data-field="status">Provisioning<' in html
    assert 'data-field="model">H100 80 GB' in html
    assert 'data-field="duration">7 days<' in html
    assert 'data-field="lots">2<' in html
    assert 'data-field="total-cards">2<' in html
    assert f'data-field="ssh-key">{SSH_KEY}</code>' in html
    assert f'data-field="ssh-fingerprint">{SSH_KEY_FINGERPRINT}<' in html
    host = order_hosts(provisioning_order).get()
    allocation = section(html, "allocation")
    assert host.name in allocation
    assert f"ubuntu@127.0.0.1:{host.ssh_port}" in allocation
    cards = sorted(
        CardAllocation.objects.filter(order=provisioning_order).values_list("card_index", flat=True)
    )
    assert f"cards {cards[0] + 1}, {cards[1] + 1}" in allocation
    assert f"ssh -p {host.ssh_port} ubuntu@127.0.0.1" in allocation
    assert 'data-field="prepared">Not yet<' in html
    assert 'data-status="paid"' in html and 'data-status="provisioning"' in html
    assert "Cards allocated: " in html  # the reason of the change
    assert 'data-action="prepare"' in html
    assert 'data-action="allocate"' not in html
    assert 'data-action="recheck"' not in html
    assert "Access details for the customer" in html
    assert 'name="csrfmiddlewaretoken"' in html


def test_an_order_without_key_says_it_waits_for_it(operator_client, provisioning_order):
    Order.objects.filter(pk=provisioning_order.pk).update(ssh_public_key="")
    html = operator_client.get(order_url(provisioning_order)).content.decode()
    assert "Waiting for the customer's SSH key" in html
    assert "ssh-fingerprint" not in html


# ------------------------------------------------------------------------------ prepare


def test_prepared_hosts_that_refuse_ssh_end_in_the_ssh_section(
    operator_client, provisioning_order, prepare, closed_port, operator
):
    order_hosts(provisioning_order).update(ssh_port=closed_port)
    response = prepare(provisioning_order)
    assert response.status_code == 302
    assert response["Location"] == order_url(provisioning_order)
    order = Order.objects.get(pk=provisioning_order.pk)
    assert order.status == OrderStatus.PROVISIONING
    assert order.prepared_by == operator
    assert order.access_notes == NOTES
    assert order.readiness_attempts == 3
    assert order.provisioning_issue == ProvisioningIssue.READINESS

    page = operator_client.get(order_url(order))
    html = page.content.decode()
    assert (
        f"Order {order.reference} is marked prepared; the worker is checking SSH on its hosts."
        in html
    )
    assert 'data-field="attempts">3<' in html
    assert "connection refused" in html
    assert 'data-action="prepare"' in html  # offered again, to correct and re-mark
    assert f'id="id_access_notes">\n{NOTES}</textarea>' in html  # starting from the last details
    assert 'data-action="recheck"' in html
    assert NOTES in html
    assert "ops@example.com" in html

    queue = operator_client.get(QUEUE).content.decode()
    failed = section(queue, "ssh-failed")
    assert "SSH did not answer (1)" in failed
    assert order.reference in failed
    assert "No SSH banner after 3 checks" in failed and "refused" in failed
    assert order.reference not in section(queue, "to-prepare")
    assert order.reference not in section(queue, "checking")


def test_hosts_that_answer_make_the_rental_active(
    operator_client, provisioning_order, prepare, sshd
):
    order_hosts(provisioning_order).update(ssh_host=sshd.host, ssh_port=sshd.port)
    mail.outbox.clear()
    response = prepare(provisioning_order)
    assert response.status_code == 302
    order = Order.objects.get(pk=provisioning_order.pk)
    assert order.status == OrderStatus.ACTIVE
    assert order.starts_at is not None
    assert (order.ends_at - order.starts_at).days == 7
    assert order.readiness_attempts == 0
    assert [message.to for message in mail.outbox] == [["grace@example.com"]]

    html = operator_client.get(order_url(order)).content.decode()
    assert 'data-field="status">Active<' in html
    period = html.split('data-field="period">')[1].split("</dd>")[0]
    assert f'<time datetime="{date_filter(order.starts_at, "c")}">' in period
    assert f'<time datetime="{date_filter(order.ends_at, "c")}">' in period
    assert "No action applies to this order now." in html
    assert 'data-status="active"' in html
    queue = operator_client.get(QUEUE).content.decode()
    active = section(queue, "active")
    assert "Active rental (1)" in active
    assert order.reference in active
    assert order.reference not in section(queue, "to-prepare")


def test_prepare_without_key_is_refused(operator_client, provisioning_order, prepare):
    Order.objects.filter(pk=provisioning_order.pk).update(ssh_public_key="")
    response = prepare(provisioning_order)
    assert response.status_code == 400
    html = response.content.decode()
    assert "has not given an SSH public key" in html
    assert 'role="alert" data-field="action-error"' in html
    order = Order.objects.get(pk=provisioning_order.pk)
    assert order.prepared_at is None
    assert order.access_notes == ""


@pytest.mark.parametrize(
    ("notes", "message"),
    [
        ("", "Describe what was prepared: the customer sees it with the access."),
        ("   ", "Describe what was prepared: the customer sees it with the access."),
        ("Ubuntu", "Describe what was prepared in at least 10 characters (it has 6)."),
        ("x" * 4001, "Keep the access details to 4000 characters (they have 4001)."),
    ],
)
def test_prepare_with_bad_access_notes_is_refused(
    operator_client, provisioning_order, prepare, notes, message
):
    response = prepare(provisioning_order, notes=notes)
    assert response.status_code == 400
    html = response.content.decode()
    assert message in html
    assert "Nothing was saved: correct the fields marked below." in html
    assert response.context["prepare_form"].errors
    assert Order.objects.get(pk=provisioning_order.pk).prepared_at is None


def test_prepare_on_an_order_that_is_not_provisioning_is_refused(
    operator_client, waiting_order, prepare
):
    response = prepare(waiting_order)
    assert response.status_code == 400
    assert "Only an order being provisioned can be marked prepared" in response.content.decode()
    assert Order.objects.get(pk=waiting_order.pk).prepared_at is None


# ------------------------------------------------------------------------------ allocate


def test_allocate_once_hosts_are_back_from_maintenance(
    operator_client, catalogue, waiting_order, django_capture_on_commit_callbacks
):
    page = operator_client.get(order_url(waiting_order)).content.decode()
    assert 'data-action="allocate"' in page
    assert 'data-action="prepare"' not in page
    assert "Not enough free cards" in page

    response = operator_client.post(action_url(waiting_order, "allocate"), follow=True)
    assert response.redirect_chain == [(order_url(waiting_order), 302)]
    html = response.content.decode()
    assert "Still not enough free cards: Needs 1 lot(s)" in html
    assert 'class="message warning"' in html
    assert Order.objects.get(pk=waiting_order.pk).status == OrderStatus.PAID

    hosts_set_state(Host.objects.filter(gpu_model=catalogue["h200"]), HostState.AVAILABLE)
    with django_capture_on_commit_callbacks(execute=True):
        response = operator_client.post(action_url(waiting_order, "allocate"), follow=True)
    assert f"Cards allocated to order {waiting_order.reference}." in response.content.decode()
    order = Order.objects.get(pk=waiting_order.pk)
    assert order.status == OrderStatus.PROVISIONING
    assert order.provisioning_issue == ""
    assert CardAllocation.objects.filter(order=order, released_at__isnull=True).count() == 1
    change = order.status_changes.get(to_status=OrderStatus.PROVISIONING)
    assert change.actor.email == "ops@example.com"
    queue = operator_client.get(QUEUE).content.decode()
    assert order.reference in section(queue, "to-prepare")
    assert order.reference not in section(queue, "waiting-for-cards")


def test_allocate_on_an_order_with_cards_is_refused(operator_client, provisioning_order):
    response = operator_client.post(action_url(provisioning_order, "allocate"))
    assert response.status_code == 400
    assert "Only a paid order still waiting for cards can be allocated." in (
        response.content.decode()
    )
    assert CardAllocation.objects.filter(order=provisioning_order).count() == 2


# ------------------------------------------------------------------------------- recheck


def test_recheck_after_the_ssh_endpoint_is_fixed(
    operator_client,
    provisioning_order,
    prepare,
    closed_port,
    sshd,
    django_capture_on_commit_callbacks,
):
    order_hosts(provisioning_order).update(ssh_port=closed_port)
    prepare(provisioning_order)
    assert Order.objects.get(pk=provisioning_order.pk).provisioning_issue == "readiness"

    order_hosts(provisioning_order).update(ssh_host=sshd.host, ssh_port=sshd.port)
    with django_capture_on_commit_callbacks(execute=True):
        response = operator_client.post(action_url(provisioning_order, "recheck"), follow=True)
    assert response.redirect_chain == [(order_url(provisioning_order), 302)]
    assert (
        f"The worker is checking SSH again for order {provisioning_order.reference}."
        in response.content.decode()
    )
    order = Order.objects.get(pk=provisioning_order.pk)
    assert order.status == OrderStatus.ACTIVE
    assert order.provisioning_issue == ""


def test_recheck_that_fails_again_counts_from_zero(
    operator_client, provisioning_order, prepare, closed_port, django_capture_on_commit_callbacks
):
    order_hosts(provisioning_order).update(ssh_port=closed_port)
    prepare(provisioning_order)
    with django_capture_on_commit_callbacks(execute=True):
        response = operator_client.post(action_url(provisioning_order, "recheck"))
    assert response.status_code == 302
    order = Order.objects.get(pk=provisioning_order.pk)
    assert order.readiness_attempts == 3
    assert order.provisioning_issue == ProvisioningIssue.READINESS


def test_recheck_before_the_worker_gave_up_is_refused(operator_client, provisioning_order):
    response = operator_client.post(action_url(provisioning_order, "recheck"))
    assert response.status_code == 400
    html = response.content.decode()
    assert "SSH is checked again only after the worker gave up on this order." in html
    assert 'data-action="recheck"' in html  # the failed form stays on the page


def test_the_checking_section_shows_attempts_and_the_last_error(
    operator_client, provisioning_order, operator
):
    from django.utils import timezone

    Order.objects.filter(pk=provisioning_order.pk).update(
        prepared_at=timezone.now(),
        prepared_by=operator,
        readiness_attempts=2,
        readiness_error="127.0.0.1:2222: no SSH banner within 1.0 s",
    )
    html = operator_client.get(QUEUE).content.decode()
    checking = section(html, "checking")
    assert "Checking readiness (1)" in checking
    assert provisioning_order.reference in checking
    assert 'data-field="attempts">2<' in checking
    assert "no SSH banner within 1.0 s" in checking
    page = operator_client.get(order_url(provisioning_order)).content.decode()
    # The worker is still at it: no second chain of checks, no re-mark.
    assert 'data-action="recheck"' not in page
    assert 'data-action="prepare"' not in page


# ----------------------------------------------------------------------- not found


def test_unknown_order_and_action_are_not_found(operator_client, provisioning_order):
    assert (
        operator_client.get(reverse("rental:ops_order", kwargs={"order_id": 999999})).status_code
        == 404
    )
    missing = reverse("rental:ops_order_action", kwargs={"order_id": 999999, "action": "recheck"})
    assert operator_client.post(missing).status_code == 404
    missing = reverse("rental:ops_order_action", kwargs={"order_id": 999999, "action": "prepare"})
    assert operator_client.post(missing, {"access_notes": NOTES}).status_code == 404
    assert operator_client.post(action_url(provisioning_order, "delete")).status_code == 404
    assert operator_client.get(action_url(provisioning_order, "prepare")).status_code == 405
