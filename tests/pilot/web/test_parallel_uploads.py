"""Two reports sent at once on two connections while the customer downloads a new kit (which
replaces the token they carry).

What must hold whatever the interleaving: a report is stored only if its token was still the
live one when it was stored (before the replacement), or refused as replaced; nothing half
done; one live token afterwards, the new one; the old token's last use is its last stored
report; and the order's handover problem follows the last stored report.
"""

import pytest

from pilot.exceptions import TokenReplaced
from pilot.models import DiagnosticsReport, KitToken
from pilot.services.reports import report_upload_with_token
from pilot.services.tokens import kit_token_issue, token_hash
from rental.models import Order, ProvisioningIssue
from tests.concurrency import run_concurrently

from .conftest import build_report, encode

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 6


def test_uploads_racing_a_new_kit_never_store_a_report_on_a_replaced_token(funded, make_order):
    order = make_order(funded)
    matching = encode(build_report(order))
    differing = encode(
        build_report(
            order,
            seen={
                "model": "NVIDIA H100",
                "cards": 0,
                "memory_gb_per_card": 80.0,
                "platform": "cuda",
            },
        )
    )
    for round_number in range(ROUNDS):
        old = kit_token_issue(order=order)
        before = DiagnosticsReport.objects.count()

        def work(index):
            if index == 2:
                return kit_token_issue(order=order)
            body = differing if index == 0 else matching
            return report_upload_with_token(order_id=order.pk, token=old, raw=body)

        results = run_concurrently(work, 3, workers=3)

        new = results[2]
        assert isinstance(new, str), results
        stored = [r for r in results[:2] if isinstance(r, DiagnosticsReport)]
        refused = [r for r in results[:2] if isinstance(r, TokenReplaced)]
        assert len(stored) + len(refused) == 2, results  # nothing else happened
        assert DiagnosticsReport.objects.count() == before + len(stored)

        old_row = KitToken.objects.get(token_hash=token_hash(old))
        live = KitToken.objects.get(order=order, replaced_at__isnull=True)
        assert live.token_hash == token_hash(new)
        assert old_row.replaced_at is not None
        for report in DiagnosticsReport.objects.filter(pk__in=[r.pk for r in stored]):
            assert report.token_id == old_row.pk
            assert report.uploaded_at <= old_row.replaced_at
        assert old_row.last_used_at == max((r.uploaded_at for r in stored), default=None)

        # The old token is dead now; the new one works.
        with pytest.raises(TokenReplaced):
            report_upload_with_token(order_id=order.pk, token=old, raw=matching)
        last = report_upload_with_token(
            order_id=order.pk, token=new, raw=differing if round_number % 2 else matching
        )
        order.refresh_from_db()
        expected_issue = ProvisioningIssue.HANDOVER if last.handover_problem else ""
        assert order.provisioning_issue == expected_issue, round_number
    assert Order.objects.get(pk=order.pk).status == "active"
