"""Settling a backlog of confirmations against the bare ledger writes, on a real local chain.

500 top-up payments of 50.00 tUSDC for 50 customers, each paid with one transfer on anvil, all
seen by one scan before their N-th confirmation; then the N-th block, and the call that confirms
and settles them all at once (a backlog after downtime). Beside it, the same ledger rows (as
many transactions and entries per kind as that settlement wrote, the same accounts and amounts)
written in ONE transaction with bulk inserts and one balance UPDATE per touched account, and
committed (the ledger's deferred balance triggers run at commit). Target: at most 3x. Rounds
alternate the two, each round with fresh payments; medians, min and max. Run with `make bench`.

The figure is each round's settlement ÷ that round's bulk writes, recorded as
`settle.500.vs_one_transaction` (bench/results.py: median, min, max). The settlement's time
includes publishing its outbox messages after the commit (as a worker would);
BENCH_SETTLE_PUBLISH=0 leaves them unpublished (recorded as `...unpublished`): the share that
one outbox dispatch per commit instead of one task per event takes away.

Measured on the shared 2-core machine, each pair back to back (medians of per-round ratios,
min-max, 5 rounds). Quiet (load 1-4):
- before issue 24: 9.6x (8.8-12.1): settlement 1,364 ms against 153 ms. Unpublished: 4.3x
  (3.7-5.1), 556 ms against 115 ms.
- now (the ledger's batch as plain rows, one summary log line per batch, long `IN` lists as one
  JSON parameter): 10.2x (7.7-13.0): 1,202 ms against 118 ms. Unpublished: 2.7x (2.4-3.8),
  328 ms against 124 ms. Publishing the settlement's 1,000 outbox messages one by one after
  the commit (a Redis LPUSH and an UPDATE each, ~875 ms) is what is left of the gap.
- now with branch i24-chain's outbox (one dispatch task per commit: 2 tasks per round, the
  scan's and the settlement's, instead of 1,500): 2.9x (1.3-3.5), 355 ms against 116 ms.
Under load (8-22, the other engineers' runs) the same code gave 13.9-20.1x before and
9.6-12.3x now.
"""

import os
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
# A database and a Redis number of its own (before settings are read): the test database is
# test_<name>, created and dropped here.
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/gpu_rental_bench_settle")
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/13")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.db.models import F, Max, Sum  # noqa: E402
from django.test.utils import (  # noqa: E402
    setup_databases,
    setup_test_environment,
    teardown_databases,
    teardown_test_environment,
)

from bench.results import record  # noqa: E402

PAYMENTS, CUSTOMERS = 500, 50
AMOUNT = Decimal("50.00")
ROUNDS = int(os.environ.get("BENCH_SETTLE_ROUNDS", "5"))
# Tasks the settlement queues (customer e-mails) are published to the bench's own Redis
# database, as in production, and purged at the end: a worker runs them, not the settling call.
# BENCH_SETTLE_EAGER=1 runs them in-process instead (the test settings' way), inside the timing.
EAGER = os.environ.get("BENCH_SETTLE_EAGER") == "1"
# BENCH_SETTLE_PROFILE=1: print where the first round's settlement spends its time (and keep
# the profile in var/bench/settle.prof for pstats).
PROFILE = os.environ.get("BENCH_SETTLE_PROFILE") == "1"
# BENCH_SETTLE_PUBLISH=0: the outbox's messages are written in the settlement's transaction as
# always, but nothing is published after its commit (what publishing costs the settlement: the
# share a dispatch per commit instead of per event takes away). Recorded under its own key.
PUBLISH = os.environ.get("BENCH_SETTLE_PUBLISH", "1") != "0"
# BENCH_SETTLE_QUERIES=1: list the first round's statements (time, parameters, the SQL's start).
QUERIES = os.environ.get("BENCH_SETTLE_QUERIES") == "1"
TARGET = 3.0


def _services():
    """scan_network and confirm_transfers, wherever the watcher's parts live now (the watcher
    module is being split into scanning and confirming)."""
    try:
        from payments.chain.confirming import confirm_transfers
    except ImportError:
        from payments.services.watcher import confirm_transfers
    try:
        from payments.chain.scanning import scan_network
    except ImportError:
        from payments.services.watcher import scan_network
    return scan_network, confirm_transfers


def main() -> None:
    from web3 import Web3

    from accounts.models import User
    from config.celery_app import app as celery_app
    from payments.chain import local
    from payments.chain.networks import get_network
    from payments.crypto.services.payments import payment_create_top_up
    from payments.ledger.services.posting import customer_account
    from payments.models import (
        CryptoPayment,
        LedgerAccount,
        LedgerEntry,
        LedgerTransaction,
        PaymentStatus,
    )
    from tests.chain_fixtures import _start_anvil, _stop, anvil_binary

    scan_network, confirm_transfers = _services()
    if not PUBLISH:
        import outbox.messages

        outbox.messages.publish = lambda message_ids, **kwargs: []
    if not EAGER:
        celery_app.conf.task_always_eager = False
        celery_app.conf.broker_url = os.environ["REDIS_URL"]
    queued = 0
    process, rpc_url = _start_anvil(anvil_binary(), subprocess.DEVNULL)
    setup_test_environment()
    old_config = setup_databases(verbosity=0, interactive=False)
    settle_times, bulk_times, counts = [], [], None
    # This process's CPU (Python, the driver) in each, beside the wall time: less moved by the
    # other processes of a busy machine than the wall time, and blind to the database's work.
    settle_cpu, bulk_cpu = [], []
    started = time.perf_counter()
    try:
        w3 = Web3(Web3.HTTPProvider(rpc_url, request_kwargs={"timeout": 60}))

        def rpc(method, params=None):
            response = w3.provider.make_request(method, params or [])
            if response.get("error"):
                raise RuntimeError(f"{method}: {response['error']}")
            return response.get("result")

        token = local.deploy_token(w3)
        settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": rpc_url}
        settings.LOCAL_TOKEN_ADDRESS = token
        network = get_network("local")
        if network.confirmations < 3:
            # Seen by a scan one block behind the head means 2 confirmations already.
            raise SystemExit("the bench needs at least 3 confirmations (seen, then confirmed)")
        payer = w3.eth.account.from_key(local.PAYER_KEY)
        rpc("anvil_setBalance", [payer.address, hex(10**24)])
        local.mint(w3, token, payer.address, 10**15)
        contract = local.token_contract(w3, token)
        # All of a round's transfers in one block (seen by one scan, all below N confirmations).
        rpc("evm_setBlockGasLimit", [hex(300_000_000)])
        scan_network(network_key="local")  # the cursor starts here, before any transfer

        for round_number in range(ROUNDS):
            # -- a fresh backlog: 500 payments, paid in one block, seen, one block short of N.
            customers = [
                User.objects.create_user(
                    f"settle-{round_number}-{number}@example.com",
                    "x" * 12,
                    first_name="S",
                    last_name="E",
                )
                for number in range(CUSTOMERS)
            ]
            payments = [
                payment_create_top_up(
                    customer=customers[number % CUSTOMERS],
                    amount_usd=AMOUNT,
                    network_key="local",
                    asset_symbol="tUSDC",
                )
                for number in range(PAYMENTS)
            ]
            payment_ids = [payment.pk for payment in payments]
            rpc("evm_setAutomine", [False])
            nonce = w3.eth.get_transaction_count(payer.address, "pending")
            for payment in payments:
                tx = contract.functions.transfer(
                    Web3.to_checksum_address(payment.deposit_address.address),
                    int(payment.amount_due_units),
                ).build_transaction(
                    {
                        "from": payer.address,
                        "nonce": nonce,
                        "gas": 80_000,
                        "chainId": w3.eth.chain_id,
                        "maxFeePerGas": 10**11,
                        "maxPriorityFeePerGas": 10**9,
                    }
                )
                w3.eth.send_raw_transaction(payer.sign_transaction(tx).raw_transaction)
                nonce += 1
            rpc("evm_mine")
            paid_block = w3.eth.block_number
            rpc("evm_mine")  # the scan reads one block behind the head
            rpc("evm_setAutomine", [True])
            assert w3.eth.get_transaction_count(payer.address, "latest") == nonce, "unmined"
            scan_network(network_key="local")
            seen = CryptoPayment.objects.filter(
                pk__in=payment_ids, seen_units=F("amount_due_units")
            ).exclude(status=PaymentStatus.CONFIRMED)
            assert seen.count() == PAYMENTS, seen.count()
            have = w3.eth.block_number - paid_block + 1
            rpc("anvil_mine", [hex(network.confirmations - have)])

            # -- measured: the call that confirms and settles the backlog.
            marker = LedgerTransaction.objects.aggregate(last=Max("pk"))["last"] or 0
            t0, c0 = time.perf_counter(), time.process_time()
            if PROFILE and round_number == 0:
                import cProfile
                import pstats

                profiler = cProfile.Profile()
                profiler.runcall(confirm_transfers, network_key="local")
                settle_times.append(time.perf_counter() - t0)
                pstats.Stats(profiler).sort_stats("cumulative").print_stats(35)
                out = Path(__file__).resolve().parent.parent / "var/bench/settle.prof"
                out.parent.mkdir(parents=True, exist_ok=True)
                profiler.dump_stats(out)
            elif QUERIES and round_number == 0:
                statements = []

                def timed_statement(execute, sql, params, many, context, statements=statements):
                    started = time.perf_counter()
                    try:
                        return execute(sql, params, many, context)
                    finally:
                        count = len(params or ()) if not many else sum(map(len, params))
                        statements.append((time.perf_counter() - started, count, sql))

                with connection.execute_wrapper(timed_statement):
                    confirm_transfers(network_key="local")
                settle_times.append(time.perf_counter() - t0)
                print(
                    f"{len(statements)} statements, {sum(s[0] for s in statements) * 1000:.1f} ms"
                )
                for seconds, count, sql in statements:
                    start = " ".join(sql.split())[:110]
                    print(f"  {seconds * 1000:8.1f} ms {count:6} params  {start}")
            else:
                confirm_transfers(network_key="local")
                settle_times.append(time.perf_counter() - t0)
            settle_cpu.append(time.process_time() - c0)

            confirmed = CryptoPayment.objects.filter(
                pk__in=payment_ids, status=PaymentStatus.CONFIRMED
            ).count()
            assert confirmed == PAYMENTS, confirmed
            paid = Counter(payment.customer_id for payment in payments)
            for customer in customers:
                account = customer_account(customer)
                expected = AMOUNT * paid[customer.pk]
                assert account.balance == expected, (customer, account.balance, expected)
                total = LedgerEntry.objects.filter(account=account).aggregate(s=Sum("amount"))["s"]
                assert total == expected, (customer, total, expected)

            # -- baseline: the same ledger rows, bulk-inserted in one transaction, committed.
            written = list(
                LedgerTransaction.objects.filter(pk__gt=marker)
                .order_by("pk")
                .values(
                    "pk",
                    "kind",
                    "memo",
                    "actor_id",
                    "order_id",
                    "payment_id",
                    "idempotency_key",
                )
            )
            entries = list(
                LedgerEntry.objects.filter(transaction_id__gt=marker)
                .order_by("pk")
                .values_list("transaction_id", "account_id", "amount")
            )
            kinds = Counter(row["kind"] for row in written)
            kind_of = {row["pk"]: row["kind"] for row in written}
            entry_kinds = Counter(kind_of[transaction_id] for transaction_id, _, _ in entries)
            deltas = defaultdict(Decimal)
            for _, account_id, amount in entries:
                deltas[account_id] += amount
            round_counts = (len(written), len(entries), len(deltas), kinds, entry_kinds)
            counts = counts or round_counts
            assert round_counts == counts, (round_counts, counts)  # the same work every round

            t0, c0 = time.perf_counter(), time.process_time()
            with transaction.atomic():
                copies = LedgerTransaction.objects.bulk_create(
                    LedgerTransaction(
                        kind=row["kind"],
                        memo=row["memo"],
                        actor_id=row["actor_id"],
                        order_id=row["order_id"],
                        payment_id=row["payment_id"],
                        idempotency_key=f"bench-bulk:{round_number}:{row['idempotency_key']}",
                    )
                    for row in written
                )
                new_id = {row["pk"]: copy.pk for row, copy in zip(written, copies, strict=True)}
                LedgerEntry.objects.bulk_create(
                    LedgerEntry(transaction_id=new_id[txn], account_id=account, amount=amount)
                    for txn, account, amount in entries
                )
                for account_id in sorted(deltas):
                    LedgerAccount.objects.filter(pk=account_id).update(
                        balance=F("balance") + deltas[account_id]
                    )
            bulk_times.append(time.perf_counter() - t0)
            bulk_cpu.append(time.process_time() - c0)
            for customer in customers:
                assert customer_account(customer).balance == 2 * AMOUNT * paid[customer.pk]
    finally:
        if not EAGER:
            queued = celery_app.control.purge()
        teardown_databases(old_config, verbosity=0)
        teardown_test_environment()
        _stop(process)

    transactions, entry_count, accounts, kinds, entry_kinds = counts
    print(
        f"settling {PAYMENTS} confirmations at once ({CUSTOMERS} customers, {AMOUNT} tUSDC each), "
        f"{len(settle_times)} rounds"
    )
    print(
        f"  ledger writes per round: {transactions} transactions, {entry_count} entries, "
        f"{accounts} accounts touched"
    )
    for kind in sorted(kinds):
        print(f"    {kind:<20} {kinds[kind]:5} transactions {entry_kinds[kind]:6} entries")
    if EAGER:
        print("  queued tasks ran in-process, inside the settlement's time (BENCH_SETTLE_EAGER=1)")
    else:
        print(f"  queued tasks published to the broker, not run (all rounds, purged): {queued}")

    def line(name, samples):
        print(
            f"  {name:<36} median {statistics.median(samples) * 1000:9.1f} ms"
            f"   (min {min(samples) * 1000:9.1f}, max {max(samples) * 1000:9.1f})"
        )

    line("bulk ledger writes, one transaction", bulk_times)
    line("confirm_transfers (settlement)", settle_times)
    line("  this process's CPU: bulk writes", bulk_cpu)
    line("  this process's CPU: settlement", settle_cpu)
    # Each round's settlement against the bulk writes of the same round (interleaved).
    ratios = [settle / bulk for settle, bulk in zip(settle_times, bulk_times, strict=True)]
    key = "settle.500.vs_one_transaction" + ("" if PUBLISH else ".unpublished")
    figure = record(
        key,
        ratios,
        note="confirm_transfers of 500 confirmations ÷ the same ledger rows bulk-inserted in one "
        "transaction" + ("" if PUBLISH else " (nothing published after the commit)"),
    )
    print(
        f"  ratio per round: median {figure['median']:.2f}x "
        f"(min {figure['min']:.2f}, max {figure['max']:.2f}), {figure['rounds']} rounds"
        f"   target: ≤ {TARGET:g}×   [{key}]"
    )
    print(f"  bench run {time.perf_counter() - started:6.1f} s")


if __name__ == "__main__":
    main()
