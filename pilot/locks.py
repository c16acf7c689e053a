"""Every lock of the pilot app, in one place.

The lock order, written once: a transaction takes what it needs in this order, never the
reverse.

    0. the order's pilot mutex (a transaction-scoped advisory lock per order), taken first by
       every service that writes an order's pilot: issuing a kit's token, storing a report,
       recording a decision. They run one at a time per order, so a report is checked against
       the token that is live when it is stored (a kit downloaded meanwhile waits, or comes
       first and the report is refused), and the per-order limits count what is there.
    1. rental's rows (the order), taken by rental's intent services (rental.services.handover)
       when a report raises or clears a handover problem.

Pilot never locks an Order row itself.
"""

from django.db import connection

from accounts.locks import advisory_key


def pilot_mutex_key(order_id: int) -> int:
    """The advisory-lock key of an order's pilot mutex (apart from payments.locks')."""
    return advisory_key("pilot.order", order_id)


def lock_order_pilot(*, order_id: int) -> None:
    """Step 0: wait until no other transaction writes this order's pilot. SQLite runs one
    writer at a time (IMMEDIATE transactions): nothing to take."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [pilot_mutex_key(order_id)])
