"""What the hosts' work tells the outbox (webhooks): access to a host ready — verified by
logging in as the tenant — and access revoked — verified revoked and erased. Written by the
tenancy's one setter (`tenancy_set_status`), in the transaction of the change."""

from outbox import events
from outbox.services import outbox_emit

from ..models import HostManagement, Order
from ..services.events import order_data
from .models import Tenancy, TenancyStatus

# status reached → event type
STATUS_EVENTS = {
    TenancyStatus.READY: events.ACCESS_READY,
    TenancyStatus.ERASED: events.ACCESS_REVOKED,
}


def _time(value) -> str | None:
    return value.isoformat() if value else None


def access_host_data(tenancy: Tenancy) -> dict:
    host = tenancy.host
    worker = host.management == HostManagement.WORKER
    user = tenancy.account if worker else host.ssh_user
    port = "" if host.ssh_port == 22 else f"-p {host.ssh_port} "
    return {
        "name": host.name,
        "ssh_host": host.ssh_host,
        "ssh_port": host.ssh_port,
        "ssh_user": user,
        "ssh_command": f"ssh {port}{user}@{host.ssh_host}",  # as the order's access shows it
        "cards": [index + 1 for index in tenancy.cards],
        "status": tenancy.status,
        "ready_at": _time(tenancy.ready_at),
        "erased_at": _time(tenancy.erased_at),
    }


def tenancy_status_emit(tenancy: Tenancy) -> None:
    """The event of the status the tenancy just reached, if its customer is told of it."""
    event_type = STATUS_EVENTS.get(tenancy.status)
    if event_type is None:
        return
    order = Order.objects.get(pk=tenancy.order_id)
    outbox_emit(
        event_type=event_type,
        account=order.customer_id,
        payload={"order": order_data(order), "host": access_host_data(tenancy)},
    )
