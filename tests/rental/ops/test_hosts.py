"""Operators' hosts: the list with free and rented cards, adding and editing a host (its
state changes only through the host's actions: tests/rental/ops/test_host_actions.py)."""

import pytest
from django.urls import reverse

from rental.models import CardAllocation, GpuModel, Host, HostState
from tests.conftest import lots_available
from tests.states import hosts_set_state

HOSTS = reverse("rental:ops_hosts")
NEW = reverse("rental:ops_host_create")


def host_url(host) -> str:
    return reverse("rental:ops_host", kwargs={"host_id": host.pk})


def host_data(model, **changes) -> dict:
    data = {
        "name": "gpu-h100-09",
        "gpu_model": str(model.pk),
        "cards": "8",
        "ssh_host": "gpu-09.example.net",
        "ssh_port": "2201",
        "ssh_user": "ubuntu",
        "management": "manual",
        "admin_user": "",
        "device_dir": "",
        "gpu_tool": "",
        "notes": "Rack 4, slot 2",
    }
    data.update(changes)
    return data


def edit_data(host, **changes) -> dict:
    data = {
        "name": host.name,
        "gpu_model": str(host.gpu_model_id),
        "cards": str(host.cards),
        "ssh_host": host.ssh_host,
        "ssh_port": str(host.ssh_port),
        "ssh_user": host.ssh_user,
        "management": host.management,
        "admin_user": host.admin_user,
        "device_dir": host.device_dir,
        "gpu_tool": host.gpu_tool,
        "notes": host.notes,
    }
    data.update(changes)
    return data


def action_url(host, action) -> str:
    return reverse("rental:ops_host_action", kwargs={"host_id": host.pk, "action": action})


def row_of(html: str, host) -> str:
    return html.split(f'data-host="{host.pk}"')[1].split("</tr>")[0]


# ------------------------------------------------------------------------------- list


def test_the_list_shows_every_host_with_free_and_rented_cards(
    operator_client, catalogue, provisioning_order
):
    html = operator_client.get(HOSTS).content.decode()
    assert html.count("data-host=") == Host.objects.count() == 8
    rented_host = Host.objects.filter(allocations__order=provisioning_order).distinct().get()
    row = row_of(html, rented_host)
    assert rented_host.name in row
    assert "H100 80 GB" in row
    assert 'data-field="cards">8<' in row
    assert 'data-field="free">6<' in row
    assert 'data-field="rented">2<' in row
    assert f'data-field="ssh">ubuntu@127.0.0.1:{rented_host.ssh_port}<' in row
    assert 'data-field="state"><span class="host-state host-state-available">Available<' in row
    assert host_url(rented_host) in row
    assert f'href="{NEW}"' in html and "Add a host" in html
    other = Host.objects.get(name="demo-mi300x-b")
    assert 'data-field="free">2<' in row_of(html, other)
    assert 'data-field="rented">0<' in row_of(html, other)


def test_released_cards_count_as_free(operator_client, provisioning_order):
    from django.utils import timezone

    CardAllocation.objects.filter(order=provisioning_order).update(released_at=timezone.now())
    host = Host.objects.filter(allocations__order=provisioning_order).first()
    row = row_of(operator_client.get(HOSTS).content.decode(), host)
    assert 'data-field="free">8<' in row
    assert 'data-field="rented">0<' in row


def test_the_list_marks_hosts_in_maintenance_and_the_navigation(operator_client, catalogue):
    host = Host.objects.get(name="demo-b200-a")
    hosts_set_state(Host.objects.filter(pk=host.pk), HostState.MAINTENANCE)
    html = operator_client.get(HOSTS).content.decode()
    assert ">Maintenance<" in row_of(html, host)
    assert 'aria-label="Operations"' in html
    assert f'href="{HOSTS}" aria-current="page"' in html
    assert f'href="{reverse("payments:ops_queue")}"' in html
    assert f'href="{reverse("rental:ops_provisioning")}"' in html


def test_the_list_without_hosts_says_so(operator_client, db):
    html = operator_client.get(HOSTS).content.decode()
    assert "No host yet" in html


# -------------------------------------------------------------------------------- add


def test_the_form_offers_active_and_inactive_models(operator_client, catalogue):
    GpuModel.objects.filter(pk=catalogue["mi300x"].pk).update(active=False)
    response = operator_client.get(NEW)
    assert response.status_code == 200
    html = response.content.decode()
    assert 'action="' + NEW + '"' in html
    assert "H100 80 GB" in html
    assert "MI300X 192 GB (not in the catalogue)" in html
    assert 'name="csrfmiddlewaretoken"' in html


def test_an_operator_adds_a_host_and_its_cards_are_offered(operator_client, catalogue):
    before = lots_available(catalogue["h100"])
    response = operator_client.post(NEW, host_data(catalogue["h100"]), follow=True)
    assert response.redirect_chain == [(HOSTS, 302)]
    host = Host.objects.get(name="gpu-h100-09")
    assert (host.gpu_model, host.cards, host.ssh_host, host.ssh_port, host.ssh_user) == (
        catalogue["h100"],
        8,
        "gpu-09.example.net",
        2201,
        "ubuntu",
    )
    assert host.state == HostState.AVAILABLE  # prepared by hand: available at once
    assert (host.management, host.admin_user, host.device_dir, host.gpu_tool) == (
        "manual",
        "",
        "/dev",
        "",
    )
    assert host.notes == "Rack 4, slot 2"
    assert "Host gpu-h100-09 is added." in response.content.decode()
    assert lots_available(catalogue["h100"]) == before + 8


def test_a_host_can_be_added_for_an_inactive_model_with_an_ip_address(operator_client, catalogue):
    GpuModel.objects.filter(pk=catalogue["mi300x"].pk).update(active=False)
    for number, address in enumerate(("10.0.4.17", "2001:db8::17")):
        response = operator_client.post(
            NEW,
            host_data(
                catalogue["mi300x"], name=f"mi-{number}", ssh_host=address, ssh_user="_gpu-user1"
            ),
        )
        assert response.status_code == 302, response.content.decode()
        assert Host.objects.get(name=f"mi-{number}").ssh_host == address
    html = operator_client.get(HOSTS).content.decode()
    assert 'data-field="ssh">_gpu-user1@10.0.4.17:2201<' in html
    assert 'data-field="ssh">_gpu-user1@[2001:db8::17]:2201<' in html


INVALID_FIELDS = [
    ("name", "", "Give the host a name"),
    ("name", "demo-h100-a", "A host with this name already exists"),
    ("name", "x" * 61, "Keep the name to 60 characters"),
    ("gpu_model", "", "Choose the GPU model of the host"),
    ("gpu_model", "999999", "Choose a GPU model from the list."),
    ("gpu_model", "abc", "Choose a GPU model from the list."),
    ("cards", "0", "Enter a whole number of cards from 1 to 64."),
    ("cards", "65", "Enter a whole number of cards from 1 to 64."),
    ("cards", "2.5", "Enter a whole number of cards from 1 to 64."),
    ("cards", "", "Enter a whole number of cards from 1 to 64."),
    ("ssh_host", "", "Enter the host name or IP address customers connect to."),
    ("ssh_host", "gpu 09.example.net", "without spaces"),
    ("ssh_host", "ssh://gpu-09.example.net", "without a scheme"),
    ("ssh_host", "ubuntu@gpu-09.example.net", "the user goes in the SSH user field"),
    ("ssh_host", "gpu-09.example.net:22", "the port goes in the SSH port field"),
    ("ssh_host", "-gpu.example.net", "Enter a valid host name"),
    ("ssh_host", "gpu_09.example.net", "Enter a valid host name"),
    ("ssh_host", "a" * 254, "Keep the host name to 253 characters"),
    ("ssh_port", "0", "Enter a port number from 1 to 65535."),
    ("ssh_port", "70000", "Enter a port number from 1 to 65535."),
    ("ssh_port", "abc", "Enter a port number from 1 to 65535."),
    ("ssh_port", "", "Enter a port number from 1 to 65535."),
    ("ssh_user", "", "Enter the user customers log in as"),
    ("ssh_user", "Ubuntu", "Enter a POSIX user name"),
    ("ssh_user", "1ubuntu", "Enter a POSIX user name"),
    ("ssh_user", "ubu ntu", "Enter a POSIX user name"),
    ("ssh_user", "u" * 33, "Enter a POSIX user name"),
    ("management", "", "Choose who prepares the host"),
    ("management", "robot", "Choose who prepares the host"),
    ("admin_user", "Admin", "Enter a POSIX user name"),
    ("admin_user", "a b", "Enter a POSIX user name"),
    ("device_dir", "dev", "Enter an absolute directory such as /dev"),
    ("device_dir", "/dev/my cards", "Enter an absolute directory such as /dev"),
    ("device_dir", "/dev/../etc", "without .. in it"),
    ("gpu_tool", "nvidia-smi; reboot", "Enter a command such as nvidia-smi"),
    ("gpu_tool", "bin/nvidia-smi", "Enter a command such as nvidia-smi"),
    ("notes", "n" * 301, "Keep the notes to 300 characters"),
]


@pytest.mark.parametrize(("field", "value", "message"), INVALID_FIELDS)
def test_an_invalid_host_is_refused_field_by_field(
    operator_client, catalogue, field, value, message
):
    count = Host.objects.count()
    response = operator_client.post(NEW, host_data(catalogue["h100"], **{field: value}))
    assert response.status_code == 400
    html = response.content.decode()
    assert message in html
    assert list(response.context["form"].errors) == [field]
    assert 'role="alert"' in html
    assert Host.objects.count() == count


def test_get_and_post_only(operator_client, catalogue):
    assert operator_client.put(NEW).status_code == 405
    assert operator_client.post(HOSTS).status_code == 405


# ------------------------------------------------------------------------------- edit


def test_the_edit_page_shows_the_host_and_the_orders_holding_its_cards(
    operator_client, provisioning_order
):
    host = Host.objects.filter(allocations__order=provisioning_order).distinct().get()
    response = operator_client.get(host_url(host))
    assert response.status_code == 200
    html = response.content.decode()
    assert f'value="{host.name}"' in html
    orders = html.split('data-section="host-orders"')[1].split("</table>")[0]
    assert provisioning_order.reference in orders
    assert "grace@example.com" in orders
    assert '<td class="amount">2</td>' in orders
    assert "Provisioning" in orders
    assert reverse("rental:ops_order", kwargs={"order_id": provisioning_order.pk}) in orders
    free = Host.objects.exclude(pk=host.pk).get(gpu_model=host.gpu_model)
    assert (
        "No card of this host is rented out."
        in operator_client.get(host_url(free)).content.decode()
    )


def test_an_operator_edits_a_host(operator_client, catalogue):
    host = Host.objects.get(name="demo-h200-b")
    response = operator_client.post(
        host_url(host),
        edit_data(host, ssh_host="10.1.2.3", ssh_port="2022", cards="6", notes="New PSU"),
    )
    assert response.status_code == 302
    assert response["Location"] == HOSTS
    host.refresh_from_db()
    assert (host.ssh_host, host.ssh_port, host.cards, host.notes) == (
        "10.1.2.3",
        2022,
        6,
        "New PSU",
    )


def test_the_state_is_not_a_field_of_the_form(operator_client, catalogue):
    host = Host.objects.get(name="demo-mi300x-a")
    html = operator_client.get(host_url(host)).content.decode()
    assert 'name="state"' not in html
    response = operator_client.post(
        host_url(host), edit_data(host, state=HostState.MAINTENANCE, notes="Posted a state")
    )
    assert response.status_code == 302
    host.refresh_from_db()
    assert (host.state, host.notes) == (HostState.AVAILABLE, "Posted a state")


def test_maintenance_takes_the_hosts_cards_out_of_the_stock(operator_client, catalogue):
    mi300x = catalogue["mi300x"]
    assert lots_available(mi300x) == 10
    host = Host.objects.get(name="demo-mi300x-a")
    response = operator_client.post(action_url(host, "maintenance"))
    assert response.status_code == 302
    assert lots_available(mi300x) == 2
    response = operator_client.post(action_url(host, "return"))
    assert response.status_code == 302
    assert lots_available(mi300x) == 10


def test_maintenance_keeps_rented_cards_with_their_order(operator_client, provisioning_order):
    host = Host.objects.filter(allocations__order=provisioning_order).distinct().get()
    response = operator_client.post(action_url(host, "maintenance"))
    assert response.status_code == 302
    assert Host.objects.get(pk=host.pk).state == HostState.MAINTENANCE
    assert (
        CardAllocation.objects.filter(order=provisioning_order, released_at__isnull=True).count()
        == 2
    )


def test_cards_cannot_drop_below_a_rented_card(operator_client, provisioning_order):
    host = Host.objects.filter(allocations__order=provisioning_order).distinct().get()
    highest = max(CardAllocation.objects.filter(host=host).values_list("card_index", flat=True))
    response = operator_client.post(
        host_url(host), edit_data(host, cards=str(highest), ssh_port="2300")
    )
    assert response.status_code == 400
    html = response.content.decode()
    needed = highest + 1
    assert f"A rented card of this host is card {needed}: keep at least {needed} card" in html
    assert '<p class="error" role="alert">' in html
    unchanged = Host.objects.get(pk=host.pk)
    assert (unchanged.cards, unchanged.ssh_port) == (host.cards, host.ssh_port)
    # The page still shows the host as stored and who holds its cards.
    assert provisioning_order.reference in html
    assert f":{host.ssh_port}</code>" in html


def test_the_model_of_a_host_with_rented_cards_cannot_change(
    operator_client, catalogue, provisioning_order
):
    host = Host.objects.filter(allocations__order=provisioning_order).distinct().get()
    response = operator_client.post(
        host_url(host), edit_data(host, gpu_model=str(catalogue["h200"].pk))
    )
    assert response.status_code == 400
    assert "its GPU model cannot change now" in response.content.decode()
    assert Host.objects.get(pk=host.pk).gpu_model == catalogue["h100"]


def test_the_model_of_a_host_without_rented_cards_can_change(operator_client, catalogue):
    host = Host.objects.get(name="demo-h100-b")
    response = operator_client.post(
        host_url(host), edit_data(host, gpu_model=str(catalogue["h200"].pk))
    )
    assert response.status_code == 302
    assert Host.objects.get(pk=host.pk).gpu_model == catalogue["h200"]


def test_an_invalid_edit_changes_nothing(operator_client, catalogue):
    host = Host.objects.get(name="demo-h100-b")
    response = operator_client.post(host_url(host), edit_data(host, ssh_port="70000", cards="4"))
    assert response.status_code == 400
    assert "Enter a port number from 1 to 65535." in response.content.decode()
    assert Host.objects.get(pk=host.pk).cards == 8


def test_renaming_to_a_taken_name_is_refused(operator_client, catalogue):
    host = Host.objects.get(name="demo-h100-b")
    response = operator_client.post(host_url(host), edit_data(host, name="demo-h100-a"))
    assert response.status_code == 400
    assert "A host with this name already exists" in response.content.decode()


def test_an_unknown_host_is_not_found(operator_client, db):
    url = reverse("rental:ops_host", kwargs={"host_id": 999999})
    assert operator_client.get(url).status_code == 404
    assert operator_client.post(url, {"name": "x"}).status_code == 404
