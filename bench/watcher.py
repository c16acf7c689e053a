"""The chain watcher's scan against the bare eth_getLogs calls it needs, on a real local chain.

Two sizes, each 5,000 blocks on anvil: 2,000 token transfers, 500 of them to watched deposit
addresses (top-ups), then a busy token's 20,800 transfers with the same 500 ours (issue 24's
targets: at most 3x and 1.5x the bare read). Each round times, in alternating order:

- bare: the eth_getLogs requests the scan must make for that range — the same block range
  (from the cursor to HEAD_LAG behind the head), the same chunks of MAX_CHUNK blocks, the same
  token addresses and Transfer topic — as plain JSON-RPC POSTs on one kept-alive HTTP session,
  each answer decoded from JSON. Nothing else: no parsing into objects, no database.
- watcher: `scan_network`, unchanged, from a cursor at the start of the range (with the hash of
  the block before it, as in production): its lease, head and fork check, the same reads, the
  re-check of the last block, matching recipients, storing the 500 transfers with their history
  rows, settling them (each payment recounted and stepped to "detected", with its status
  event and the outbox's events), the block hashes, the cursor, and the confirmation pass over
  the seen transfers. Celery publishes for real, as in the worker that scans: to the Redis
  broker of REDIS_URL (its queues emptied between rounds, not timed), not eagerly. The
  network's confirmations are set above the range's depth for these rounds, so the pass decides
  nothing: the money-moving half of settlement is measured by bench/settle.py, and below as the
  backlog line.

Beside them, for scale: the rows that scan writes (transfers, history rows, block hashes, the
payments now detected, the cursor) written alone with one bulk statement per table — bare reads
plus bare writes are the floor of any scan of this mix — and, at 2,000 transfers only (20,800
take seconds a round), the same reads through web3's get_logs, and the logs to our 500
addresses alone asked of the node by recipient (Transfer's third topic, RECIPIENT_BATCH
addresses a request): the other way to read, which the watcher does not take
(payments/chain/scanning.py says why). Each size also prints how many
tasks one scan published to the broker (one outbox dispatch per commit: 1; before, one per
event: 500) and how many redis-py clients publishing them built (config/kombu_redis.py: the
process's first publish builds its pool's client, then none; before, one per message).

Before each timed side the database is put back (not timed). Prints the per-round ratio
watcher/bare of each size as the median of the rounds with min and max, recorded with
bench/results.py as `watcher.2000.vs_bare` and `watcher.20800.vs_bare`; then the time to confirm
all 500 at once (a backlog after downtime) and the delay from a payment's N-th confirmation to
"confirmed" against the scan interval. BENCH_WATCHER_ROUNDS sets the rounds at 2,000 transfers
(5), BENCH_WATCHER_LARGE_ROUNDS at 20,800 (3: each round reads ten times the logs). Building the
two chains in anvil takes half the time: on this 2-core machine shared with four other
engineers' runs (load average 10-17) the whole script took 9 minutes (the chains 144 s and
285 s of it), over the 4 minutes it was meant to fit; the rounds are few already.
BENCH_WATCHER_SIZES=2000 (or 20800) runs one size only, while iterating. BENCH_PROFILE=1
prints where one warm scan of each size spends its time, and its SQL statements. Run with
`make bench`.
"""

import contextlib
import os
import statistics
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.test.utils import (  # noqa: E402
    setup_databases,
    setup_test_environment,
    teardown_databases,
    teardown_test_environment,
)

BLOCKS, WATCHED = 5000, 500
RECIPIENT_BATCH = 100  # addresses per eth_getLogs when filtering by recipient (providers cap it)
# (transfers of the token in the range, rounds, target): a quarter of them ours, then a busy
# token where ours are 500 among 20,800. Fewer rounds for the large size (each reads 20,800).
SIZES = tuple(
    size
    for size in (
        (2000, int(os.environ.get("BENCH_WATCHER_ROUNDS", "5")), 3.0),
        (20800, int(os.environ.get("BENCH_WATCHER_LARGE_ROUNDS", "3")), 1.5),
    )
    # BENCH_WATCHER_SIZES=2000 (or 20800): one size only, while iterating.
    if str(size[0]) in os.environ.get("BENCH_WATCHER_SIZES", "2000,20800").split(",")
)


def sprayer_code(amount: int) -> str:
    """EVM runtime code that emits, for each 32-byte word of its calldata, the ERC-20 Transfer
    log of `amount` from the caller to that word (LOG3: the Transfer topic, from, to; the
    amount as data), as the token emits it. Hand-assembled: no compiler needed."""
    from payments.chain.networks import TRANSFER_TOPIC

    topic = TRANSFER_TOPIC.removeprefix("0x")
    head = "7f" + f"{amount:064x}" + "6000" + "52" + "6000"  # memory[0:32] = amount; offset 0
    loop = len(head) // 2  # JUMPDEST below
    body = (
        "5b"  # JUMPDEST
        + "80"
        + "36"
        + "11"
        + "15"  # DUP1 CALLDATASIZE GT ISZERO: no word left?
        + "61{end:04x}"
        + "57"  # PUSH2 end, JUMPI
        + "80"
        + "35"
        + "33"  # DUP1 CALLDATALOAD (to), CALLER (from)
        + "7f"
        + topic  # PUSH32 the Transfer topic
        + "6020"
        + "6000"
        + "a3"  # PUSH1 32, PUSH1 0, LOG3(0, 32, topic, from, to)
        + "6020"
        + "01"  # PUSH1 32, ADD: the next word
        + f"61{loop:04x}"
        + "56"  # PUSH2 loop, JUMP
    )
    end = loop + len(body.format(end=0)) // 2
    code = head + body.format(end=end) + "5b" + "00"  # end: JUMPDEST STOP
    return "0x" + code


def build_chain(w3, token: str, payments, transfers: int) -> int:
    """Mine BLOCKS blocks holding `transfers` token Transfer logs, every fourth one (up to
    WATCHED) to a payment's deposit address; the first block of the range. The logs come from
    the token's address as the token emits them, but many to a transaction: for the build, the
    token's code is swapped for a log sprayer (sprayer_code) and put back after (20,800 signed
    transfers took anvil over ten minutes on a loaded machine; what a scan reads is the same)."""
    import requests

    from payments.chain import local

    start_block = w3.eth.block_number + 1
    payer = local.address_of(local.PAYER_KEY)
    w3.provider.make_request("anvil_setBalance", [payer, hex(10**21)])
    local.mint(w3, token, payer, 10**15)
    token_code = w3.eth.get_code(token).to_0x_hex()
    w3.provider.make_request("anvil_setCode", [token, sprayer_code(10_000_000)])
    w3.provider.make_request("evm_setAutomine", [False])
    nonce = w3.eth.get_transaction_count(payer, "pending")
    blocks_with_transfers = 400
    per_block = transfers // blocks_with_transfers
    gap = (BLOCKS - blocks_with_transfers) // blocks_with_transfers
    sent = 0
    session = requests.Session()
    rpc_url = w3.provider.endpoint_uri
    for _block in range(blocks_with_transfers):
        words = []
        for _ in range(per_block):
            if sent % 4 == 0 and sent // 4 < WATCHED:
                to = payments[sent // 4].deposit_address.address
            else:
                to = f"0x{sent + 1 + (transfers << 32):040x}"
            words.append(to.lower().removeprefix("0x").rjust(64, "0"))
            sent += 1
        tx = {
            "from": payer,
            "to": token,
            "data": "0x" + "".join(words),
            "nonce": hex(nonce),
            "gas": hex(30_000 + 3_000 * per_block),
            "maxFeePerGas": hex(10**10),
            "maxPriorityFeePerGas": hex(10**9),
        }
        # The transaction, then its block and the gap after it (anvil_mine puts the pending
        # transaction in the first block it mines), in one request.
        answers = session.post(
            rpc_url,
            json=[
                {"jsonrpc": "2.0", "id": 1, "method": "eth_sendTransaction", "params": [tx]},
                {"jsonrpc": "2.0", "id": 2, "method": "anvil_mine", "params": [hex(gap + 1)]},
            ],
            timeout=60,
        ).json()
        assert all("result" in answer for answer in answers), answers
        nonce += 1
    w3.provider.make_request(
        "anvil_mine", [hex(BLOCKS - (w3.eth.block_number - start_block + 1) + 3)]
    )
    w3.provider.make_request("evm_setAutomine", [True])
    w3.provider.make_request("anvil_setCode", [token, token_code])
    return start_block


def bare_reader(rpc_url: str, tokens: list[str], start: int, end: int, chunk: int):
    """The bare eth_getLogs requests over [start, end] in chunks: raw JSON-RPC, decoded."""
    import requests

    from payments.chain.networks import TRANSFER_TOPIC

    session = requests.Session()

    def read() -> int:
        found, block, request_id = 0, start, 0
        while block <= end:
            last = min(block + chunk - 1, end)
            request_id += 1
            params = {
                "fromBlock": hex(block),
                "toBlock": hex(last),
                "address": tokens,
                "topics": [TRANSFER_TOPIC],
            }
            body = session.post(
                rpc_url,
                json={
                    "jsonrpc": "2.0",
                    "id": request_id,
                    "method": "eth_getLogs",
                    "params": [params],
                },
                timeout=30,
            ).json()
            found += len(body["result"])
            block = last + 1
        return found

    return read


def filtered_reader(rpc_url: str, tokens: list[str], start: int, end: int, chunk: int, to):
    """The same chunks asking the node for the logs to `to` alone (Transfer's third topic,
    the addresses in batches of RECIPIENT_BATCH): what a watcher filtering by recipient on the
    node's side would read."""
    import requests

    from payments.chain.networks import TRANSFER_TOPIC

    session = requests.Session()
    topics = ["0x" + address.lower().removeprefix("0x").rjust(64, "0") for address in to]
    batches = [topics[i : i + RECIPIENT_BATCH] for i in range(0, len(topics), RECIPIENT_BATCH)]

    def read() -> int:
        found, block, request_id = 0, start, 0
        while block <= end:
            last = min(block + chunk - 1, end)
            for batch in batches:
                request_id += 1
                params = {
                    "fromBlock": hex(block),
                    "toBlock": hex(last),
                    "address": tokens,
                    "topics": [TRANSFER_TOPIC, None, batch],
                }
                body = session.post(
                    rpc_url,
                    json={
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "method": "eth_getLogs",
                        "params": [params],
                    },
                    timeout=30,
                ).json()
                found += len(body["result"])
            block = last + 1
        return found

    return read


def web3_reader(rpc_url: str, tokens: list[str], start: int, end: int, chunk: int):
    """The same requests through web3's eth.get_logs (the previous bench's baseline, and what
    the watcher paid before it decoded the node's answers itself)."""
    from web3 import Web3

    from payments.chain.networks import TRANSFER_TOPIC

    w3 = Web3(Web3.HTTPProvider(rpc_url))
    addresses = [Web3.to_checksum_address(token) for token in tokens]

    def read() -> int:
        found, block = 0, start
        while block <= end:
            last = min(block + chunk - 1, end)
            params = {
                "fromBlock": block,
                "toBlock": last,
                "address": addresses,
                "topics": [TRANSFER_TOPIC],
            }
            found += len(w3.eth.get_logs(params))
            block = last + 1
        return found

    return read


def bare_writer(network):
    """The rows a scan just wrote (transfers, history rows, block hashes, payments now
    detected, the cursor), written again alone: one bulk statement per table, one transaction."""
    from django.db import connection, transaction
    from django.utils import timezone

    from payments.bulk import insert_rows
    from payments.models import ChainBlock, ChainCursor, ChainTransfer, CryptoPayment, PaymentEvent

    def rows_of(model, exclude=()):
        fields = [
            f.attname for f in model._meta.concrete_fields if f.attname not in ("id", *exclude)
        ]
        return fields, list(model.objects.order_by("pk").values_list(*fields))

    transfers = rows_of(ChainTransfer)
    events = rows_of(PaymentEvent)
    events = (events[0], [row for row in events[1] if row[events[0].index("kind")] != "created"])
    blocks = rows_of(ChainBlock)
    payment_ids = [row[transfers[0].index("payment_id")] for row in transfers[1]]
    cursor_row = ChainCursor.objects.get(network=network.key)
    payment_table = CryptoPayment._meta.db_table

    def write() -> None:
        with transaction.atomic():
            for model, (fields, rows) in (
                (ChainTransfer, transfers),
                (PaymentEvent, events),
                (ChainBlock, blocks),
            ):
                insert_rows(model, fields, rows)
            with connection.cursor() as cursor:
                cursor.execute(
                    f"UPDATE {payment_table} SET status = 'detected', seen_units = 10000000,"  # noqa: S608
                    " updated_at = now() WHERE id = ANY(%s)",
                    [payment_ids],
                )
            ChainCursor.objects.filter(pk=cursor_row.pk).update(
                next_block=cursor_row.next_block,
                last_block_hash=cursor_row.last_block_hash,
                last_scan_at=timezone.now(),
            )

    return write


def progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def quiet_logs() -> None:
    """The payment services log a line per status change (500 a scan here): written, as in
    production, but to /dev/null rather than over this report."""
    import logging

    handler = logging.StreamHandler(open(os.devnull, "w"))  # noqa: SIM115 - for the run
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().handlers = [handler]


def broker_queues(app):
    """Celery publishes for real, as in the worker that scans: to the Redis broker of REDIS_URL
    (the bench's own database), not eagerly; returns (count, empty) over the queues a scan
    publishes to."""
    import redis

    from config.queues import QUEUES

    url = os.environ.get("REDIS_URL") or settings.REDIS_URL
    if not url:
        raise SystemExit("the watcher bench publishes to Redis: set REDIS_URL")
    app.conf.task_always_eager = False
    app.conf.broker_url = url
    client = redis.Redis.from_url(url)
    names = list(QUEUES)

    def count() -> int:
        return sum(client.llen(name) for name in names)

    def empty() -> None:
        client.delete(*names)

    return count, empty


@contextlib.contextmanager
def counting_redis_clients():
    """How many redis-py clients are built meanwhile (kombu built one per message it put)."""
    import redis

    built = [0]
    original = redis.Redis.__init__

    def init(self, *args, **kwargs):
        built[0] += 1
        original(self, *args, **kwargs)

    redis.Redis.__init__ = init
    try:
        yield built
    finally:
        redis.Redis.__init__ = original


def main() -> None:
    from django.db import connection
    from web3 import Web3

    from accounts.models import User
    from bench.results import record
    from config.celery_app import app as celery_app
    from config.celery_app import freeze_startup_objects
    from outbox.models import OutboxEvent, OutboxMessage
    from payments.chain import confirming, local, scanning
    from payments.chain.networks import HEAD_LAG, get_network
    from payments.crypto.services.payments import payment_create_top_up
    from payments.models import (
        ChainBlock,
        ChainCursor,
        ChainTransfer,
        CryptoPayment,
        PaymentEvent,
        PaymentEventKind,
        PaymentStatus,
    )
    from tests.chain_fixtures import _start_anvil, _stop, anvil_binary

    quiet_logs()
    queued, empty_queues = broker_queues(celery_app)
    empty_queues()
    process, rpc_url = _start_anvil(anvil_binary(), subprocess.DEVNULL)
    setup_test_environment()
    old_config = setup_databases(verbosity=0, interactive=False)
    results = []
    try:
        w3 = Web3(Web3.HTTPProvider(rpc_url, request_kwargs={"timeout": 120}))
        token = local.deploy_token(w3)
        settings.PAYMENT_RPC_URLS = {**settings.PAYMENT_RPC_URLS, "local": rpc_url}
        settings.LOCAL_TOKEN_ADDRESS = token
        customer = User.objects.create_user(
            "bench@example.com", "x" * 12, first_name="B", last_name="E"
        )
        payments = [
            payment_create_top_up(
                customer=customer,
                amount_usd=Decimal("10.00"),
                network_key="local",
                asset_symbol="tUSDC",
            )
            for _ in range(WATCHED)
        ]
        confirmations = dict(settings.PAYMENT_CONFIRMATIONS)
        settings.PAYMENT_CONFIRMATIONS = {**confirmations, "local": 20 * BLOCKS}
        network = get_network("local")
        tokens = [asset.token_address for asset in network.assets]

        for transfers, rounds, target in SIZES:
            began = time.perf_counter()
            start_block = build_chain(w3, token, payments, transfers)
            progress(f"{transfers} transfers: chain built in {time.perf_counter() - began:.0f} s")
            end_block = w3.eth.block_number - HEAD_LAG  # what the scan reads up to
            before_hash = w3.eth.get_block(start_block - 1)["hash"].to_0x_hex()
            bare = bare_reader(rpc_url, tokens, start_block, end_block, scanning.MAX_CHUNK)
            through_web3 = web3_reader(rpc_url, tokens, start_block, end_block, scanning.MAX_CHUNK)
            assert bare() == through_web3() == transfers + 1  # and the mint to the payer
            filtered = filtered_reader(
                rpc_url,
                tokens,
                start_block,
                end_block,
                scanning.MAX_CHUNK,
                [payment.deposit_address.address for payment in payments],
            )
            assert filtered() == WATCHED

            def reset(start_block=start_block, before_hash=before_hash):
                ChainTransfer.objects.all().delete()
                ChainBlock.objects.all().delete()
                PaymentEvent.objects.exclude(kind=PaymentEventKind.CREATED).delete()
                OutboxEvent.objects.all().delete()
                OutboxMessage.objects.all().delete()
                CryptoPayment.objects.update(
                    status=PaymentStatus.AWAITING, seen_units=0, received_units=0
                )
                ChainCursor.objects.update_or_create(
                    network="local",
                    defaults={
                        "next_block": start_block,
                        "last_block_hash": before_hash,
                        "lease_token": "",
                        "lease_until": None,
                    },
                )
                empty_queues()
                # The same 500 payments are written hundreds of times here, each of them a few
                # times in production: vacuumed, so that dead rows of earlier rounds weigh
                # nothing.
                with connection.cursor() as cursor:
                    for model in (
                        CryptoPayment,
                        ChainTransfer,
                        PaymentEvent,
                        ChainBlock,
                        ChainCursor,
                        OutboxEvent,
                        OutboxMessage,
                    ):
                        cursor.execute(f"VACUUM ANALYZE {model._meta.db_table}")

            def scan(start_block=start_block, end_block=end_block):
                report = scanning.scan_network(network_key="local")
                assert report.stored == WATCHED, report
                assert (report.from_block, report.to_block) == (start_block, end_block), report
                return report

            # As a worker process does once started (config.celery_app): what is alive now is
            # out of the cycle collector's way; what the rounds allocate is collected as usual.
            freeze_startup_objects()
            if os.environ.get("BENCH_PROFILE"):
                import cProfile
                import pstats

                reset()
                scan()  # warm: the process's first publish builds its broker connection
                reset()
                profiler = cProfile.Profile()
                profiler.runcall(scan)
                pstats.Stats(profiler).sort_stats("cumulative").print_stats(60)
                pstats.Stats(profiler).sort_stats("tottime").print_stats(20)
                from django.test.utils import CaptureQueriesContext

                reset()
                with CaptureQueriesContext(connection) as queries:
                    scan()
                print(f"SQL statements of one scan: {len(queries.captured_queries)}")
                for query in queries.captured_queries:
                    print(f"  {query['time']:>6} s  {query['sql'][:160]}")

            reset()
            with counting_redis_clients() as built:
                scan()
            published = queued()
            write_alone = bare_writer(network)  # the rows that scan wrote, to write them again
            sides = {"bare": bare, "scan": scan, "writes": write_alone, "filtered": filtered}
            with_web3 = transfers <= 2000  # 20,800 logs through web3 take seconds a round
            if with_web3:
                sides["web3"] = through_web3
            times: dict[str, list[float]] = {side: [] for side in sides}
            for round_number in range(rounds):
                # Alternate the order: the sides share the machine's noise and its drift. The
                # bare writes go in a round of their own (they write what the scan writes).
                order = (
                    ["bare", "scan", "web3"] if round_number % 2 == 0 else ["web3", "scan", "bare"]
                )
                order = [side for side in order if side in sides]
                for side in (*order, "filtered", "writes"):
                    if side in ("scan", "writes"):
                        reset()
                    t0 = time.perf_counter()
                    sides[side]()
                    times[side].append(time.perf_counter() - t0)
            progress(
                f"{transfers} transfers: {rounds} rounds in {time.perf_counter() - began:.0f} s"
            )
            results.append(
                (
                    transfers,
                    rounds,
                    target,
                    end_block - start_block + 1,
                    times,
                    published,
                    built[0],
                )
            )
            reset()
            scan()
            assert CryptoPayment.objects.filter(status=PaymentStatus.DETECTED).count() == WATCHED

        # Confirming the 500 at once (a backlog after downtime).
        settings.PAYMENT_CONFIRMATIONS = confirmations
        network = get_network("local")
        w3.provider.make_request("anvil_mine", [hex(network.confirmations)])
        t0 = time.perf_counter()
        confirmed, _ = confirming.confirm_transfers(network_key="local")
        backlog_time = time.perf_counter() - t0
        assert confirmed == WATCHED, confirmed
        # The usual case: one payment, its N-th confirmation, the next scan.
        single = payment_create_top_up(
            customer=customer,
            amount_usd=Decimal("10.00"),
            network_key="local",
            asset_symbol="tUSDC",
        )
        scanning.scan_network(network_key="local")
        local.transfer(w3, token, local.PAYER_KEY, single.deposit_address.address, 10_000_000)
        w3.provider.make_request("anvil_mine", [hex(network.confirmations)])
        t0 = time.perf_counter()
        scanning.scan_network(network_key="local")
        confirm_time = time.perf_counter() - t0
        single.refresh_from_db()
        assert single.status == PaymentStatus.CONFIRMED, single.status
    finally:
        empty_queues()
        teardown_databases(old_config, verbosity=0)
        teardown_test_environment()
        _stop(process)

    for transfers, rounds, target, blocks, times, published, new_clients in results:
        bare_times, scan_times, write_times = times["bare"], times["scan"], times["writes"]
        ratios = [s / b for s, b in zip(scan_times, bare_times, strict=True)]
        record(
            f"watcher.{transfers}.vs_bare",
            ratios,
            note=f"{transfers} transfers, {WATCHED} ours; publishing to Redis",
        )
        bare_time, scan_time = statistics.median(bare_times), statistics.median(scan_times)
        print(
            f"watcher scan of {blocks} blocks / {transfers} transfers / "
            f"{WATCHED} ours, {rounds} interleaved rounds"
        )
        print(f"  bare eth_getLogs (same range and chunks)  median {bare_time * 1000:7.1f} ms")
        print(f"  watcher scan (read, store, settle seen)   median {scan_time * 1000:7.1f} ms")
        print(
            f"  ratio watcher / bare: median {statistics.median(ratios):5.2f}x "
            f"(min {min(ratios):5.2f}x, max {max(ratios):5.2f}x; target <= {target}x)"
        )
        print(
            f"  tasks one scan published to the broker: {published}; redis-py clients it built: "
            f"{new_clients}"
        )
        floor = [(b + w) / b for b, w in zip(bare_times, write_times, strict=True)]
        print(
            f"  the rows it writes, written alone         median "
            f"{statistics.median(write_times) * 1000:7.1f} ms; (bare reads + these writes) / "
            f"bare reads: median {statistics.median(floor):5.2f}x (min {min(floor):5.2f}x, max "
            f"{max(floor):5.2f}x), the floor for this mix of blocks and transfers"
        )
        by_recipient = [f / b for f, b in zip(times["filtered"], bare_times, strict=True)]
        print(
            f"  the logs to our {WATCHED} addresses alone, asked of the node by recipient "
            f"({RECIPIENT_BATCH} a request) median "
            f"{statistics.median(times['filtered']) * 1000:7.1f} ms: "
            f"{statistics.median(by_recipient):5.2f}x the bare read (min "
            f"{min(by_recipient):5.2f}x, max {max(by_recipient):5.2f}x)"
        )
        if "web3" in times:
            web3_ratios = [s / w for s, w in zip(scan_times, times["web3"], strict=True)]
            print(
                f"  the same reads through web3's get_logs    median "
                f"{statistics.median(times['web3']) * 1000:7.1f} ms; watcher / that: median "
                f"{statistics.median(web3_ratios):5.2f}x (min {min(web3_ratios):5.2f}x, "
                f"max {max(web3_ratios):5.2f}x)"
            )
    interval = settings.PAYMENT_SCAN_INTERVAL_SECONDS
    # The page shows "confirmed" after the first scan that starts once the N-th block exists:
    # on average half an interval later, at worst a whole one, plus that scan's own time.
    mean_delay = interval / 2 + confirm_time
    print(f"  scan that confirms one payment {confirm_time * 1000:8.1f} ms")
    print(
        f"  N-th confirmation -> confirmed: mean {mean_delay:5.2f} s = "
        f"{mean_delay / interval:4.2f} of the {interval} s scan interval (target < 1); "
        f"worst {interval + confirm_time:5.2f} s"
    )
    print(f"  backlog: confirming {WATCHED} transfers at once {backlog_time * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
