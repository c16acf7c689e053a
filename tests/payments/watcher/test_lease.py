"""A scan's claim on a network's cursor is a short lease, renewed while the scan reads: a scan
killed mid-way is taken over within 30 seconds, a live one is never taken over."""

import time

from django.conf import settings as django_settings

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
