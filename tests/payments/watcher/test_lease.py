"""A scan's claim on a network's cursor is a short lease, renewed while the scan reads: a scan
killed mid-way is taken over within 30 seconds, a live one is never taken over."""

import threading
import time

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.utils import timezone

from payments.chain.scanning import claim, lease_duration
from payments.models import ChainCursor, ChainTransfer


def test_the_lease_and_the_scan_interval_fit_in_30_seconds():
    # Before: a 4-minute lease; the next payment was detected after 215 s.
    assert (
        django_settings.PAYMENT_SCAN_LEASE_SECONDS + (django_settings.PAYMENT_SCAN_INTERVAL_SECONDS)
        <= 30
    )


def test_a_scan_killed_mid_way_is_taken_over_once_its_lease_ran_out(
    chain, order_payment, pay, scan, settings
):
    settings.PAYMENT_SCAN_LEASE_SECONDS = 1
    payment = order_payment()
    assert claim("local") is not None  # a scan that claimed the cursor, then was killed
    pay(payment)
    chain.mine(1)

    assert scan().skipped  # its lease still runs: nobody scans twice at once
    time.sleep(1.2)
    report = scan()

    assert not report.skipped
    assert ChainTransfer.objects.get().payment_id == payment.pk
    assert ChainCursor.objects.get(network="local").lease_token == ""


def test_a_renewed_lease_is_not_taken_over(chain, order_payment, settings):
    settings.PAYMENT_SCAN_LEASE_SECONDS = 3
    order_payment()
    _cursor, lease = claim("local")
    time.sleep(2.1)  # more than a third of the lease left: renewing is due
    lease.renew()
    time.sleep(1.2)  # past the first lease's end, inside the renewed one
    assert claim("local") is None
    until = ChainCursor.objects.get(network="local").lease_until
    assert until == lease.until and lease_duration().total_seconds() == 3


@pytest.mark.django_db(transaction=True)
def test_a_killed_scans_lease_is_taken_over_at_once_when_its_session_is_gone(chain, order_payment):
    """Seen in the fault run: a payments worker SIGKILLed mid-scan stopped every scan for the
    20 s of its lease (a confirmation took 27 s). Its database session goes with it: the next
    scan takes over then. While that session lives, nobody takes over."""
    order_payment()
    holder = {}
    ready, done = threading.Event(), threading.Event()

    def killed_scan():  # claims on a connection of its own, which then goes away
        try:
            holder["claim"] = claim("local")
            ready.set()
            done.wait(30)
        finally:
            connection.close()

    scan = threading.Thread(target=killed_scan)
    scan.start()
    assert ready.wait(30) and holder["claim"] is not None
    lease_until = ChainCursor.objects.get(network="local").lease_until
    assert claim("local") is None  # its session lives: its lease holds

    done.set()
    scan.join(30)
    deadline = time.monotonic() + 10  # the server notices the closed connection
    while (taken := claim("local")) is None and time.monotonic() < deadline:
        time.sleep(0.05)

    assert taken is not None
    assert timezone.now() < lease_until  # taken over before the killed scan's lease ran out
