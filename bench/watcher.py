"""The chain watcher's scan against the bare eth_getLogs calls it needs, on a real local chain.

5,000 blocks holding 2,000 token transfers, 500 of them to watched deposit addresses (top-ups),
on anvil. Each round times, in alternating order:

- bare: the eth_getLogs requests the scan must make for that range — the same block range
  (from the cursor to HEAD_LAG behind the head), the same chunks of MAX_CHUNK blocks, the same
  token addresses and Transfer topic — as plain JSON-RPC POSTs on one kept-alive HTTP session,
  each answer decoded from JSON. Nothing else: no parsing into objects, no database.
- watcher: `scan_network`, unchanged, from a cursor at the start of the range (with the hash of
  the block before it, as in production): its lease, head and fork check, the same reads, the
  re-check of the last block, matching recipients, storing the 500 transfers with their history
  rows, settling them (each payment recounted and stepped to "detected", with its status
  event), the block hashes, the cursor, and the confirmation pass over the seen transfers. The
  network's confirmations are set above the range's depth for these rounds, so the pass decides
  nothing: the money-moving half of settlement is measured by bench/settle.py, and below as the
  backlog line.

Beside them, for scale: the rows that scan writes (transfers, history rows, block hashes, the
payments now detected, the cursor) written alone with one bulk statement per table — bare reads
plus bare writes are the floor of any scan of this mix (a quarter of the token's transfers are
ours) — and the same reads through web3's get_logs (the previous baseline: web3 decoding the
answers cost more than the node answering them).

Before each timed side the database is put back (not timed). Prints the per-round ratio
watcher/bare as the median of the rounds with min and max (target: at most 1.2x), then the time
to confirm all 500 at once (a backlog after downtime) and the delay from a payment's N-th
confirmation to "confirmed" against the scan interval. BENCH_WATCHER_ROUNDS sets the rounds (9);
BENCH_PROFILE=1 prints where one scan spends its time. Run with `make bench`.
"""

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

BLOCKS, TRANSFERS, WATCHED = 5000, 2000, 500
ROUNDS = int(os.environ.get("BENCH_WATCHER_ROUNDS", "9"))
TARGET = 1.2
TRANSFER_SELECTOR = "0xa9059cbb"  # transfer(address,uint256)


def build_chain(w3, token: str, payments) -> int:
    """Mine BLOCKS blocks holding TRANSFERS token transfers, every fourth one (up to WATCHED)
    to a payment's deposit address; the first block of the range. The payer is one of anvil's
    unlocked accounts: anvil signs, each block's transfers go in one JSON-RPC batch."""
    import requests

    from payments.chain import local

    start_block = w3.eth.block_number + 1
    payer = local.address_of(local.PAYER_KEY)
    w3.provider.make_request("anvil_setBalance", [payer, hex(10**21)])
    local.mint(w3, token, payer, 10**15)
    w3.provider.make_request("evm_setAutomine", [False])
    nonce = w3.eth.get_transaction_count(payer, "pending")
    rpc_url = w3.provider.endpoint_uri
    blocks_with_transfers = 400
    per_block = TRANSFERS // blocks_with_transfers
    gap = (BLOCKS - blocks_with_transfers) // blocks_with_transfers
    sent = 0
    with requests.Session() as session:
        for _block in range(blocks_with_transfers):
            batch = []
            for _ in range(per_block):
                if sent % 4 == 0 and sent // 4 < WATCHED:
                    to = payments[sent // 4].deposit_address.address
                else:
                    to = f"0x{sent + 1:040x}"
                data = TRANSFER_SELECTOR + to.lower().removeprefix("0x").rjust(64, "0")
                data += f"{10_000_000:064x}"
                tx = {
                    "from": payer,
                    "to": token,
                    "data": data,
                    "nonce": hex(nonce),
                    "gas": hex(80_000),
                    "maxFeePerGas": hex(10**10),
                    "maxPriorityFeePerGas": hex(10**9),
                }
                batch.append(
                    {"jsonrpc": "2.0", "id": sent, "method": "eth_sendTransaction", "params": [tx]}
                )
                nonce += 1
                sent += 1
            answers = session.post(rpc_url, json=batch, timeout=30).json()
            assert all("result" in answer for answer in answers), answers
            w3.provider.make_request("evm_mine", [])
            w3.provider.make_request("anvil_mine", [hex(gap)])
    w3.provider.make_request(
        "anvil_mine", [hex(BLOCKS - (w3.eth.block_number - start_block + 1) + 3)]
    )
    w3.provider.make_request("evm_setAutomine", [True])
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


def quiet_logs() -> None:
    """The payment services log a line per status change (500 a scan here): written, as in
    production, but to /dev/null rather than over this report."""
    import logging

    handler = logging.StreamHandler(open(os.devnull, "w"))  # noqa: SIM115 - for the run
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger().handlers = [handler]


def main() -> None:
    from django.db import connection
    from web3 import Web3

    from accounts.models import User
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
    process, rpc_url = _start_anvil(anvil_binary(), subprocess.DEVNULL)
    setup_test_environment()
    old_config = setup_databases(verbosity=0, interactive=False)
    try:
        w3 = Web3(Web3.HTTPProvider(rpc_url))
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
        start_block = build_chain(w3, token, payments)
        end_block = w3.eth.block_number - HEAD_LAG  # what the scan reads up to
        before_hash = w3.eth.get_block(start_block - 1)["hash"].to_0x_hex()
        confirmations = dict(settings.PAYMENT_CONFIRMATIONS)
        settings.PAYMENT_CONFIRMATIONS = {**confirmations, "local": 10 * BLOCKS}
        network = get_network("local")
        tokens = [asset.token_address for asset in network.assets]
        bare = bare_reader(rpc_url, tokens, start_block, end_block, scanning.MAX_CHUNK)
        through_web3 = web3_reader(rpc_url, tokens, start_block, end_block, scanning.MAX_CHUNK)
        assert bare() == through_web3() == TRANSFERS + 1  # and the mint to the payer

        def reset():
            ChainTransfer.objects.all().delete()
            ChainBlock.objects.all().delete()
            PaymentEvent.objects.exclude(kind=PaymentEventKind.CREATED).delete()
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
            # The same 500 payments are written hundreds of times here, each of them a few
            # times in production: vacuumed, so that dead rows of earlier rounds weigh nothing.
            with connection.cursor() as cursor:
                for model in (CryptoPayment, ChainTransfer, PaymentEvent, ChainBlock, ChainCursor):
                    cursor.execute(f"VACUUM ANALYZE {model._meta.db_table}")

        def scan():
            report = scanning.scan_network(network_key="local")
            assert report.stored == WATCHED, report
            assert (report.from_block, report.to_block) == (start_block, end_block), report
            return report

        if os.environ.get("BENCH_PROFILE"):
            import cProfile
            import pstats

            reset()
            profiler = cProfile.Profile()
            profiler.runcall(scan)
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)
            pstats.Stats(profiler).sort_stats("tottime").print_stats(20)

        reset()
        scan()
        write_alone = bare_writer(network)  # the rows that scan wrote, to write them again
        sides = {"bare": bare, "scan": scan, "web3": through_web3, "writes": write_alone}
        times: dict[str, list[float]] = {side: [] for side in sides}
        for round_number in range(ROUNDS):
            # Alternate the order: the sides share the machine's noise and its drift. The bare
            # writes go in a round of their own (they write what the scan writes).
            order = ("bare", "scan", "web3") if round_number % 2 == 0 else ("web3", "scan", "bare")
            for side in (*order, "writes"):
                if side in ("scan", "writes"):
                    reset()
                t0 = time.perf_counter()
                sides[side]()
                times[side].append(time.perf_counter() - t0)
        bare_times, scan_times, web3_times = times["bare"], times["scan"], times["web3"]
        write_times = times["writes"]
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
        teardown_databases(old_config, verbosity=0)
        teardown_test_environment()
        _stop(process)

    ratios = [s / b for s, b in zip(scan_times, bare_times, strict=True)]
    web3_ratios = [s / w for s, w in zip(scan_times, web3_times, strict=True)]
    bare_time, scan_time = statistics.median(bare_times), statistics.median(scan_times)
    interval = settings.PAYMENT_SCAN_INTERVAL_SECONDS
    print(
        f"watcher scan of {end_block - start_block + 1} blocks / {TRANSFERS} transfers / "
        f"{WATCHED} ours, {ROUNDS} interleaved rounds"
    )
    print(f"  bare eth_getLogs (same range and chunks)  median {bare_time * 1000:7.1f} ms")
    print(f"  watcher scan (read, store, settle seen)   median {scan_time * 1000:7.1f} ms")
    print(
        f"  ratio watcher / bare: median {statistics.median(ratios):5.2f}x "
        f"(min {min(ratios):5.2f}x, max {max(ratios):5.2f}x; target <= {TARGET}x)"
    )
    floor = [(b + w) / b for b, w in zip(bare_times, write_times, strict=True)]
    print(
        f"  the rows it writes, written alone         median "
        f"{statistics.median(write_times) * 1000:7.1f} ms; (bare reads + these writes) / bare "
        f"reads: median {statistics.median(floor):5.2f}x (min {min(floor):5.2f}x, max "
        f"{max(floor):5.2f}x), the floor for this mix of blocks and transfers"
    )
    print(
        f"  the same reads through web3's get_logs    median "
        f"{statistics.median(web3_times) * 1000:7.1f} ms; watcher / that: median "
        f"{statistics.median(web3_ratios):5.2f}x (min {min(web3_ratios):5.2f}x, "
        f"max {max(web3_ratios):5.2f}x)"
    )
    # The page shows "confirmed" after the first scan that starts once the N-th block exists:
    # on average half an interval later, at worst a whole one, plus that scan's own time.
    mean_delay = interval / 2 + confirm_time
    print(f"  scan that confirms one payment {confirm_time * 1000:8.1f} ms")
    print(
        f"  N-th confirmation -> confirmed: mean {mean_delay:5.2f} s = "
        f"{mean_delay / interval:4.2f} of the {interval} s scan interval (target < 1); "
        f"worst {interval + confirm_time:5.2f} s"
    )
    print(
        f"  backlog: confirming {WATCHED} transfers at once {backlog_time * 1000:7.1f} ms "
        f"({backlog_time / bare_time:4.1f}x the bare read)"
    )


if __name__ == "__main__":
    main()
