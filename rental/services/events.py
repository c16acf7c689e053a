"""What the rental tells the outbox (webhooks): an order paid, active, ending, ended, extended,
cancelled or expired (an unpaid order released).

Written in the transaction of the change (`order_set_status`, the reminder's email row), so
the event commits with it or not at all. The data is the order as the API shows it, kept
small; `order.active` carries the access details.
"""

from outbox import events
from outbox.services import outbox_emit

from ..models import REMINDER_HOURS, Order, OrderStatus
from ..selectors import order_access

# status reached → event type
STATUS_EVENTS = {
    OrderStatus.PAID: events.ORDER_PAID,
    OrderStatus.ACTIVE: events.ORDER_ACTIVE,
    OrderStatus.ENDED: events.ORDER_ENDED,
    OrderStatus.CANCELLED: events.ORDER_CANCELLED,
}


def _time(value) -> str | None:
    return value.isoformat() if value else None


def order_data(order: Order) -> dict:
    return {
        "id": order.pk,
        "reference": order.reference,
        "status": order.status,
        "gpu_model": order.model_name,
        "lots": order.lots,
        "total_cards": order.total_cards,
        "duration_days": order.duration_days,
        "total_usd": f"{order.total_usd:.2f}",
        "currency": "USD",
        "starts_at": _time(order.starts_at),
        "ends_at": _time(order.ends_at),
    }


def access_data(order: Order) -> dict:
    return {
        "hosts": [
            {
                "name": host.host_name,
                "ssh_host": host.ssh_host,
                "ssh_port": host.ssh_port,
                "ssh_user": host.ssh_user,
                "ssh_command": host.ssh_command,
                "cards": list(host.cards),
            }
            for host in order_access(order)
        ],
        "notes": order.access_notes,
    }


def order_status_emit(order: Order, *, from_status: str = "", actor=None) -> None:
    """The event of the status the order just reached, if it has one. An order cancelled by
    no one while it awaited payment was released because its time to pay ran out (its
    payment expired, or its hold did): `order.expired`; any other cancellation (the
    customer's, an operator's after a review) is `order.cancelled`."""
    event_type = STATUS_EVENTS.get(order.status)
    if event_type is None:
        return
    if (
        event_type == events.ORDER_CANCELLED
        and actor is None
        and from_status == OrderStatus.AWAITING_PAYMENT
    ):
        event_type = events.ORDER_EXPIRED
    data = {"order": order_data(order)}
    if order.status == OrderStatus.ACTIVE:
        data["access"] = access_data(order)
    outbox_emit(event_type=event_type, account=order.customer_id, payload=data)


def order_ending_emit(order: Order, kind: str) -> None:
    """A reminder before the end (72, 24 or 1 hours): once per order and reminder, however
    many ticks find it due, and whether or not its email could be sent."""
    data = {"order": order_data(order), "hours_left": REMINDER_HOURS[kind]}
    outbox_emit(
        event_type=events.ORDER_ENDING,
        account=order.customer_id,
        payload=data,
        once_key=ending_once_key(order, kind),
    )


def ending_once_key(order: Order, kind: str) -> str:
    """Once per order, reminder and rental period: an extension starts a new period whose
    reminders are due again (the first period keeps the key it always had)."""
    key = f"{events.ORDER_ENDING}:{order.pk}:{kind}"
    return key if order.period == 0 else f"{key}:{order.period}"


def order_extended_emit(order: Order, extension) -> None:
    """An extension is paid (rental.services.extensions): the order with its new end."""
    data = {
        "order": order_data(order),
        "extension": {
            "id": extension.pk,
            "reference": extension.reference,
            "duration_days": extension.duration_days,
            "total_usd": f"{extension.total_usd:.2f}",
            "currency": "USD",
            "extends_from": _time(extension.period_starts_at),
            "extends_to": _time(extension.period_ends_at),
        },
    }
    outbox_emit(event_type=events.ORDER_EXTENDED, account=order.customer_id, payload=data)
