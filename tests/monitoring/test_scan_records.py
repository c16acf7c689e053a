"""What the scan records for the health page: the head and time of each successful scan, and
the error of each failed one — whatever failed, the node or our own database."""

import pytest
from django.db import ProgrammingError, connection

from payments.chain.rpc import RpcError
from payments.chain.scanning import scan_network
from payments.models import ChainCursor

pytestmark = pytest.mark.django_db


def cursor() -> ChainCursor:
    return ChainCursor.objects.get(network="local")


def test_a_scan_records_the_head_it_saw_and_when(chain):
    chain.mine(3)
    scan_network(network_key="local")
    first = cursor()
    assert first.last_head == chain.head() and first.next_block == chain.head()
    assert first.last_scan_at is not None
    assert first.last_error == "" and first.last_error_at is None

    chain.mine(4)
    scan_network(network_key="local")
    second = cursor()
    assert second.last_head == chain.head() == first.last_head + 4
    assert second.last_scan_at > first.last_scan_at


def test_a_scan_with_the_node_down_records_the_error(chain, dead_rpc_url, settings):
    scan_network(network_key="local")
    before = cursor()
    settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": dead_rpc_url}
    with pytest.raises(RpcError):
        scan_network(network_key="local")
    after = cursor()
    assert "Connection refused" in after.last_error
    assert after.last_error_at is not None
    # What the last successful scan saw stays: the page shows how old it is.
    assert (after.last_scan_at, after.last_head, after.next_block) == (
        before.last_scan_at,
        before.last_head,
        before.next_block,
    )
    assert after.lease_token == ""  # the next scan may start at once


def test_a_scan_failing_on_our_own_database_records_the_error(chain):
    """Seen before the fix: the scan's catch-all released the lease with no error, wiping the
    previous one, so a scan failing for any reason but the node looked healthy."""
    scan_network(network_key="local")
    chain.mine(2)
    with connection.cursor() as db:
        db.execute("ALTER TABLE payments_chainblock RENAME TO payments_chainblock_away")
    with pytest.raises(ProgrammingError):
        scan_network(network_key="local")
    failed = cursor()
    assert failed.last_error.startswith("ProgrammingError: ")
    assert "payments_chainblock" in failed.last_error
    assert failed.last_error_at is not None
    with connection.cursor() as db:
        db.execute("ALTER TABLE payments_chainblock_away RENAME TO payments_chainblock")
    scan_network(network_key="local")
    assert cursor().last_error == ""
