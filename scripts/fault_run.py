"""The fault run of issue 22: the production roles under a customer load with faults, then a
verdict. `python -m scripts.fault_run [--minutes 10] [--customers 6]` (or `make fault-run`).

The stack is scripts/production_stack.py's: every role of Procfile.production as a plain process
with `config.settings.production`, on a PostgreSQL database, Redis, local chain and mail server
of its own. Two web servers; the second one and the relay reach the broker through a TCP proxy
this script can cut.

The load: customers sign up (the code from the mail), then, until the end, each in turn tops up
its balance on chain, orders and pays on chain (declaring "I have paid" half of the time), or
orders and pays from its balance, on either web server. Two more customers point nine webhook
endpoints each at a receiver that answers a byte every 4 s, and top up again and again: each
top-up is three events for each of their nine endpoints.

The faults, at fixed points of the run:
- from the start: the slow webhook receivers; hosts out of reach (the stack runs no SSH server
  for the demo hosts: `demo_hosts` is not a production role);
- at 15 %: the broker is cut for the second web server and the relay for 90 s (the web keeps
  committing, the relay keeps the messages in the outbox);
- at 35 %: worker-payments is killed with SIGKILL while it holds a message (a task running,
  not yet acknowledged), and started again 5 s later (as systemd's Restart=always would): what
  it held is delivered again after the visibility timeout (360 s);
- at 50 %: a second beat starts, and runs to the end.

Then it stops the load, waits for the stack to settle, and checks: no answer was a 5xx, every
transfer was confirmed and credited once, the ledger reconciles (`manage.py reconcile`), every
email a payment calls for arrived once, the outbox is empty, the second beat sent nothing, every
role is still up; and it prints the confirmation times (transfer mined → payment confirmed),
which must stay under 15 s. Exit 0 when everything holds, 1 otherwise.
"""

import argparse
import contextlib
import os
import random
import re
import signal
import socket
import statistics
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import redis
import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from scripts.production_stack import ProductionStack, StackError, free_port  # noqa: E402

PASSWORD = "fault-run-passphrase-7c1d"
STABLECOIN = "local:tUSDC"
CONFIRMATION_TARGET_SECONDS = 15
SLOW_ENDPOINTS = 9
TRICKLE_SECONDS = 4
BROKER_CUT_SECONDS = 90
RESTART_AFTER_SECONDS = 5
SETTLE_SECONDS = 600  # after the load: the last confirmations, emails, a killed worker's tasks
CODE = re.compile(r"^\s*([A-Z0-9]{4}-[A-Z0-9]{4})\s*$", re.MULTILINE)
ORDER_URL = re.compile(r"/account/orders/(\d+)/$")
PAYMENT_URL = re.compile(r"/account/payments/(\d+)/$")
CONFIGURATIONS = [
    {"gpu_model": slug, "duration_days": "3", "lots": "1", "preparation": "ubuntu"}
    for slug in ("h100-80gb", "h200-141gb", "mi300x-192gb", "b200-180gb")
]


def say(message: str) -> None:
    print(f"[fault-run {time.strftime('%H:%M:%S')}] {message}", flush=True)


# --------------------------------------------------------------------------- the faults' parts


class TrickleReceiver:
    """A webhook receiver that reads the request, then answers one byte every TRICKLE_SECONDS
    (each attempt is cut by the site after its deadline)."""

    def __init__(self):
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True, name="trickle").start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn: socket.socket) -> None:
        answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        try:
            conn.settimeout(30)
            conn.recv(65536)
            for byte in answer:
                if self._stop.is_set():
                    break
                conn.sendall(bytes([byte]))
                time.sleep(TRICKLE_SECONDS)
        except OSError:
            pass
        finally:
            conn.close()

    def stop(self) -> None:
        self._stop.set()
        self.listener.close()


class BrokerProxy:
    """A TCP proxy to the broker's Redis: cut() drops every connection and refuses new ones,
    restore() listens again on the same port."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        self.port = free_port()
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self.listener: socket.socket | None = None
        self.restore()

    def restore(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", self.port), reuse_port=False)
        threading.Thread(target=self._serve, args=(self.listener,), daemon=True).start()

    def cut(self) -> None:
        self.listener.close()
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._sockets.clear()

    def _serve(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets.update((client, upstream))
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.close()


# --------------------------------------------------------------------------- customers


@dataclass
class Tally:
    statuses: Counter = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)
    refused: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    visits: Counter = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, method: str, path: str, status: int, server: str) -> None:
        with self.lock:
            self.statuses[status] += 1
            if status >= 500 or status == 0:
                self.server_errors.append(f"{time.strftime('%H:%M:%S')} {method} {server}{path}"
                                          f" -> {status}")  # fmt: skip


@dataclass
class Transfer:
    payment_id: int
    mined_at: float  # time.time() once the transfer's receipt was in
    purpose: str
    email: str


class Browser:
    def __init__(self, run: "FaultRun"):
        self.run = run
        self.session = requests.Session()
        self.base_url = run.stack.web_urls[0]

    def use(self, base_url: str) -> None:
        self.base_url = base_url

    def request(self, method: str, path: str, expect=(200,), **kwargs) -> requests.Response:
        for cookie in self.session.cookies:
            cookie.secure = False  # as a browser on http://127.0.0.1 (a secure context) sends them
        headers = kwargs.pop("headers", {})
        if method == "POST":
            headers["X-CSRFToken"] = self.session.cookies.get("csrftoken", "")
        try:
            response = self.session.request(
                method, self.base_url + path, headers=headers, timeout=60,
                allow_redirects=False, **kwargs,
            )  # fmt: skip
        except requests.RequestException as exc:
            self.run.tally.record(method, path, 0, self.base_url)
            raise RuntimeError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        self.run.tally.record(method, path, response.status_code, self.base_url)
        if response.status_code not in expect:
            raise RuntimeError(f"{method} {path} answered {response.status_code}")
        return response

    def get(self, path: str, expect=(200,)) -> requests.Response:
        return self.request("GET", path, expect)

    def post(self, path: str, data: dict, expect=(302,)) -> requests.Response:
        return self.request("POST", path, expect, data=data)


class Customer:
    def __init__(self, run: "FaultRun", number: int, kind: str):
        self.run = run
        self.kind = kind
        self.email = f"fault-{kind}-{number}-{random.randrange(10**6):06d}@example.com"  # noqa: S311
        self.browser = Browser(run)
        self.rng = random.Random(number)  # noqa: S311 - a load's choices
        self.user_id: int | None = None

    def sign_up(self) -> None:
        b = self.browser
        b.get("/accounts/signup/")
        location = b.post(
            "/accounts/signup/",
            {"first_name": "Fault", "last_name": self.kind.title(), "email": self.email,
             "password1": PASSWORD, "password2": PASSWORD},
        ).headers["Location"]  # fmt: skip
        mail = self.run.stack.mail.wait_for(self.email, "Confirm your email address", timeout=120)
        b.post(location, {"code": CODE.search(mail.body()).group(1)})
        b.get("/account/orders/")
        from accounts.models import User

        self.user_id = User.objects.get(email=self.email).pk

    def top_up(self, amount: str) -> int:
        b = self.browser
        b.get("/account/balance/top-up/")
        response = b.post("/account/balance/top-up/", {"amount": amount, "stablecoin": STABLECOIN})
        payment_id = int(PAYMENT_URL.search(response.headers["Location"]).group(1))
        b.get(f"/account/payments/{payment_id}/")
        return payment_id

    def order(self) -> int | None:
        b = self.browser
        configuration = self.rng.choice(CONFIGURATIONS)
        b.get("/")
        response = b.post("/order/confirm/", configuration, expect=(302, 409))
        if response.status_code == 409:
            self.run.tally.refused["order refused (stock or unpaid orders)"] += 1
            return None
        order_id = int(ORDER_URL.search(response.headers["Location"]).group(1))
        b.get(f"/account/orders/{order_id}/")
        return order_id

    def pay_crypto(self, order_id: int) -> int:
        response = self.browser.post(
            f"/account/orders/{order_id}/pay/crypto/", {"stablecoin": STABLECOIN}
        )
        payment_id = int(PAYMENT_URL.search(response.headers["Location"]).group(1))
        self.browser.get(f"/account/payments/{payment_id}/")
        return payment_id

    def visit(self) -> None:
        """One visit on a web server chosen at random: what it does depends on the customer."""
        self.browser.use(self.rng.choice(self.run.stack.web_urls))
        if self.kind == "attacker":
            self.run.transfer(self, self.top_up("10.00"), "top-up")
            self.run.tally.visits["attacker top-up"] += 1
            return
        roll = self.rng.random()
        if roll < 0.4:
            self.run.transfer(self, self.top_up(self.rng.choice(["150.00", "400.00"])), "top-up")
            self.run.tally.visits["top-up on chain"] += 1
            return
        order_id = self.order()
        if order_id is None:
            return
        if roll < 0.75:
            payment_id = self.pay_crypto(order_id)
            self.run.transfer(self, payment_id, "order", declare=self.rng.random() < 0.5)
            self.run.tally.visits["order paid on chain"] += 1
            return
        self.browser.post(f"/account/orders/{order_id}/pay/balance/", {})
        from rental.models import Order, OrderStatus

        if Order.objects.get(pk=order_id).status == OrderStatus.AWAITING_PAYMENT:
            # Refused (the page says why: the balance does not cover the order).
            self.run.tally.refused["balance too small"] += 1
            self.browser.post(f"/account/orders/{order_id}/cancel/", {})
            return
        self.run.balance_paid.append(order_id)
        self.run.tally.visits["order paid from the balance"] += 1


# --------------------------------------------------------------------------- the run


class FaultRun:
    def __init__(self, minutes: float, customers: int):
        self.minutes = minutes
        self.customer_count = customers
        self.trickle = TrickleReceiver()
        self.stack = ProductionStack(
            web_servers=1,
            # Webhook receivers on 127.0.0.1 (production refuses private addresses).
            env_overrides={"WEBHOOK_ALLOW_PRIVATE_ADDRESSES": "1"},
            role_env={"web": {"WEB_CONCURRENCY": "2"}},
        )
        self.tally = Tally()
        self.transfers: list[Transfer] = []
        self.balance_paid: list[int] = []
        self.readyz: dict[str, Counter] = {}
        self.events: list[str] = []
        self.chain_lock = threading.Lock()
        self.stop_load = threading.Event()
        self.proxy: BrokerProxy | None = None
        self.unacked_at_kill: set[str] = set()

    # ---------------------------------------------------------------- setup

    def start(self) -> None:
        say("starting the production roles (scripts/production_stack.py) ...")
        self.stack.start()
        redis_port = int(self.stack.redis_url.rsplit(":", 1)[1].split("/")[0])
        self.proxy = BrokerProxy(redis_port)
        proxied = re.sub(r":\d+/", f":{self.proxy.port}/", self.stack.redis_url)
        # Two payments workers (README: 1+; one is killed); the second web server and the relay
        # reach the broker through the proxy.
        self.stack.start_role("worker-payments")
        self.stack.start_role("web", CELERY_BROKER_URL=proxied)
        self.stack.kill("relay", signal.SIGTERM)
        self.stack.start_role("relay", CELERY_BROKER_URL=proxied)
        self.stack.wait_until_ready(timeout=300)
        self._django()
        self._fund_payer()
        say(f"ready: web servers {', '.join(self.stack.web_urls)}; logs in {self.stack.log_dir}")

    def _django(self) -> None:
        os.environ.update(self.stack.env())
        import django

        django.setup()

    def _fund_payer(self) -> None:
        """The customers' wallet: a million test dollars of the local token."""
        from django.conf import settings

        from payments.chain import local

        w3 = local.web3_for(settings.PAYMENT_RPC_URLS["local"])
        tx_hash = local.mint(
            w3, settings.LOCAL_TOKEN_ADDRESS, local.address_of(local.PAYER_KEY), 10**12
        )
        w3.eth.wait_for_transaction_receipt(tx_hash, timeout=60)

    def arm_attackers(self, attackers: list[Customer]) -> None:
        from accounts.models import User
        from api.webhooks.services.endpoints import endpoint_create
        from outbox.events import SUBSCRIBABLE_EVENT_TYPES

        for attacker in attackers:
            owner = User.objects.get(pk=attacker.user_id)
            for number in range(SLOW_ENDPOINTS):
                endpoint_create(
                    owner=owner,
                    url=f"http://127.0.0.1:{self.trickle.port}/hook/{attacker.user_id}/{number}",
                    events=list(SUBSCRIBABLE_EVENT_TYPES),
                )

    # ---------------------------------------------------------------- the chain

    def transfer(self, customer: Customer, payment_id: int, purpose: str, *, declare=False):
        """Send the exact amount due to the payment's address; the customer may then say so."""
        from django.conf import settings

        from payments.chain import local
        from payments.models import CryptoPayment

        payment = CryptoPayment.objects.select_related("deposit_address").get(pk=payment_id)
        w3 = local.web3_for(settings.PAYMENT_RPC_URLS["local"])
        with self.chain_lock:  # one payer: one nonce at a time
            tx_hash = local.transfer(
                w3, payment.token_address, local.PAYER_KEY,
                payment.deposit_address.address, int(payment.amount_due_units),
            )  # fmt: skip
            w3.eth.wait_for_transaction_receipt(tx_hash, timeout=60)
        self.transfers.append(Transfer(payment_id, time.time(), purpose, customer.email))
        if declare:
            customer.browser.post(f"/account/payments/{payment_id}/declare/",
                                  {"tx_hash": tx_hash})  # fmt: skip

    # ---------------------------------------------------------------- load and faults

    def customer_loop(self, customer: Customer) -> None:
        while not self.stop_load.is_set():
            try:
                customer.visit()
            except Exception as exc:  # noqa: BLE001 - every failure is reported, the load goes on
                failure = f"{customer.email}: {type(exc).__name__}: {exc}"
                self.tally.failures.append(f"{time.strftime('%H:%M:%S')} {failure}")
                if len(self.tally.failures) <= 20:
                    say(f"failure: {failure}")
            self.stop_load.wait(customer.rng.uniform(2, 6))

    def watch_readiness(self) -> None:
        while not self.stop_load.is_set():
            for url in self.stack.web_urls:
                status, _ = self.stack.readyz(url)
                self.readyz.setdefault(url, Counter())[status] += 1
            self.stop_load.wait(5)

    def note(self, event: str) -> None:
        self.events.append(f"{time.strftime('%H:%M:%S')} {event}")
        say(event)

    def faults(self, started: float, seconds: float):
        """The faults, one step at a time (a generator the main thread drives: processes are
        started from the main thread, since a child started with PR_SET_PDEATHSIG is signalled
        when the thread that started it ends)."""
        yield started + 0.15 * seconds
        self.proxy.cut()
        self.note(f"broker cut for web.2 and the relay ({BROKER_CUT_SECONDS} s)")
        yield time.time() + BROKER_CUT_SECONDS
        self.proxy.restore()
        self.note("broker back for web.2 and the relay")
        yield started + 0.35 * seconds
        # Killed while it holds a message (a scan or a payment check running, acknowledged only
        # at its end): within a minute, since beat sends a scan every 5 s.
        deadline = time.time() + 60
        while not (held := self.unacked_payments()) and time.time() < deadline:
            time.sleep(0.02)
        self.stack.kill("worker-payments.1", signal.SIGKILL)
        self.note(
            f"worker-payments.1 killed (SIGKILL) while the payments queue had {len(held)} "
            f"message(s) taken and not acknowledged"
        )
        yield time.time() + RESTART_AFTER_SECONDS
        self.stack.start_role("worker-payments")
        self.note("worker-payments started again")
        # The other worker acknowledges its own within seconds: what is still unacknowledged
        # half a minute later was the killed worker's, and waits for the visibility timeout.
        yield time.time() + 25
        self.unacked_at_kill = held & self.unacked_payments()
        self.note(
            f"{len(self.unacked_at_kill)} message(s) of the killed worker wait for the "
            f"visibility timeout"
        )
        yield started + 0.50 * seconds
        self.second_beat = self.stack.start_role("beat")
        self.note(f"a second beat started ({self.second_beat})")

    def unacked_payments(self) -> set[str]:
        """Delivery tags of the payments queue's messages taken by a worker and not yet
        acknowledged (kombu's Redis transport: the `unacked` hash, [message, exchange,
        routing key])."""
        import json

        client = redis.Redis.from_url(self.stack.redis_url)
        try:
            return {
                tag.decode()
                for tag, raw in client.hgetall("unacked").items()
                if json.loads(raw)[2] == "payments"
            }
        finally:
            client.close()

    def run_load(self) -> None:
        customers = [Customer(self, n, "customer") for n in range(self.customer_count)]
        attackers = [Customer(self, n, "attacker") for n in range(2)]
        for customer in customers + attackers:
            customer.sign_up()
        self.arm_attackers(attackers)
        say(
            f"{len(customers)} customers and 2 with {SLOW_ENDPOINTS} slow webhook endpoints "
            f"each signed up; load for {self.minutes:g} min"
        )
        seconds = self.minutes * 60
        started = time.time()
        threads = [
            threading.Thread(target=self.customer_loop, args=(c,), daemon=True)
            for c in customers + attackers
        ]
        threads.append(threading.Thread(target=self.watch_readiness, daemon=True))
        for thread in threads:
            thread.start()
        steps = self.faults(started, seconds)
        next_step = next(steps, None)
        next_progress = started + 60
        while (now := time.time()) < started + seconds or next_step is not None:
            if next_step is not None and now >= next_step:
                next_step = next(steps, None)
                continue
            if now >= next_progress:
                say(self.progress())
                next_progress += 60
            time.sleep(0.5)
        self.stop_load.set()
        for thread in threads:
            thread.join(timeout=120)

    def progress(self) -> str:
        from payments.models import CryptoPayment

        confirmed = CryptoPayment.objects.filter(
            pk__in=[t.payment_id for t in self.transfers], confirmed_at__isnull=False
        ).count()
        return (
            f"{sum(self.tally.visits.values())} visits, {len(self.transfers)} transfers "
            f"({confirmed} confirmed), answers {dict(self.tally.statuses)}, failures "
            f"{len(self.tally.failures)}, slow webhook connections {self.trickle.connections}, "
            f"roles exited {self.stack.unexpected_exits() or 'none'}"
        )

    # ---------------------------------------------------------------- settle and verdict

    def settle(self) -> None:
        """Until every transfer is confirmed, the outbox is empty and every payment's email
        has arrived, or SETTLE_SECONDS."""
        say("load stopped; waiting for the last confirmations, emails and the outbox ...")
        deadline = time.time() + SETTLE_SECONDS
        told = 0.0
        while time.time() < deadline:
            waiting = self.unsettled()
            if not waiting:
                return
            if time.time() - told >= 30:
                say(f"waiting: {'; '.join(waiting)}")
                told = time.time()
            time.sleep(5)

    def unsettled(self) -> list[str]:
        from outbox.models import OutboxMessage
        from payments.models import CryptoPayment

        waiting = []
        unconfirmed = CryptoPayment.objects.filter(
            pk__in=[t.payment_id for t in self.transfers], confirmed_at__isnull=True
        ).count()
        if unconfirmed:
            waiting.append(f"{unconfirmed} transfer(s) not confirmed")
        backlog = OutboxMessage.objects.filter(published_at__isnull=True).count()
        if backlog:
            waiting.append(f"{backlog} outbox message(s) unpublished")
        missing = self.missing_emails()
        if missing:
            waiting.append(f"{len(missing)} email(s) missing")
        if stuck := self.unacked_at_kill & self.unacked_payments():
            waiting.append(
                f"{len(stuck)} message(s) of the killed worker not yet delivered again "
                f"(the visibility timeout)"
            )
        return waiting

    def expected_emails(self) -> Counter:
        """(recipient, subject) of the emails the paid orders call for."""
        from rental.models import Order

        wanted = Counter()
        paid = [t.payment_id for t in self.transfers if t.purpose == "order"]
        orders = Order.objects.filter(pk__in=self.balance_paid) | Order.objects.filter(
            crypto_payments__pk__in=paid
        )
        for order in orders.select_related("customer").distinct():
            wanted[(order.customer.email, f"Payment received for order {order.reference}")] += 1
        return wanted

    def missing_emails(self) -> list[tuple[str, str]]:
        sent = Counter((m.recipients[0], m.subject) for m in self.stack.mail.mails())
        return [key for key in self.expected_emails() if sent[key] < 1]

    def slowest(self, payments: dict, count: int) -> list[str]:
        """The slowest transfers: when each was mined, how long until the watcher saw it
        (the DETECTED event) and until it was confirmed."""
        from payments.models import PaymentEvent, PaymentStatus

        confirmed = [t for t in self.transfers if payments[t.payment_id].confirmed_at]
        confirmed.sort(key=lambda t: t.mined_at - payments[t.payment_id].confirmed_at.timestamp())
        lines = []
        for t in confirmed[:count]:
            payment = payments[t.payment_id]
            seen = (
                PaymentEvent.objects.filter(payment=payment, to_status=PaymentStatus.DETECTED)
                .values_list("created_at", flat=True)
                .first()
            )
            seen_after = f"{seen.timestamp() - t.mined_at:.1f} s" if seen else "not recorded"
            lines.append(
                f"payment {t.payment_id}: mined {time.strftime('%X', time.localtime(t.mined_at))}"
                f"; seen after {seen_after}; confirmed after "
                f"{payment.confirmed_at.timestamp() - t.mined_at:.1f} s; {t.purpose}"
            )
        return lines

    def verdict(self) -> bool:
        from django.db import connection

        from payments.models import CryptoPayment

        problems = []
        payments = CryptoPayment.objects.in_bulk([t.payment_id for t in self.transfers])
        latencies = sorted(
            (payments[t.payment_id].confirmed_at.timestamp() - t.mined_at)
            for t in self.transfers
            if payments[t.payment_id].confirmed_at is not None
        )
        unconfirmed = [
            t.payment_id for t in self.transfers if not payments[t.payment_id].confirmed_at
        ]
        if unconfirmed:
            problems.append(f"transfers never confirmed: payments {unconfirmed}")
        if latencies and latencies[-1] >= CONFIRMATION_TARGET_SECONDS:
            problems.append(f"a confirmation took {latencies[-1]:.1f} s (target < 15 s)")
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT payment_id, count(*) FROM payments_ledgertransaction "
                "WHERE kind = 'crypto_receipt' AND payment_id = ANY(%s) "
                "GROUP BY payment_id HAVING count(*) <> 1",
                [[t.payment_id for t in self.transfers]],
            )
            twice = cursor.fetchall()
        if twice:
            problems.append(f"payments not receipted exactly once: {twice}")
        today = datetime.now(UTC).date().isoformat()
        try:
            reconcile = self.stack.manage("reconcile", "--from", today, "--to", today)
        except StackError as exc:
            reconcile = str(exc)
            problems.append("manage.py reconcile found discrepancies")
        sent = Counter((m.recipients[0], m.subject) for m in self.stack.mail.mails())
        expected = self.expected_emails()
        missing = [key for key in expected if sent[key] < 1]
        doubled = [key for key in expected if sent[key] > 1]
        if missing:
            problems.append(f"{len(missing)} payment email(s) never arrived: {missing[:5]}")
        if doubled:
            problems.append(f"{len(doubled)} payment email(s) arrived twice: {doubled[:5]}")
        from outbox.models import OutboxMessage

        backlog = OutboxMessage.objects.filter(published_at__isnull=True).count()
        from django.db.models import DurationField, ExpressionWrapper, F, Max

        waited = OutboxMessage.objects.annotate(
            wait=ExpressionWrapper(
                F("published_at") - F("created_at"), output_field=DurationField()
            )
        )
        slow = waited.filter(wait__gt=timedelta(seconds=2))
        longest = waited.aggregate(longest=Max("wait"))["longest"]
        if backlog:
            problems.append(f"{backlog} outbox message(s) never published")
        if self.tally.server_errors:
            problems.append(f"{len(self.tally.server_errors)} server error(s): "
                            f"{self.tally.server_errors[:5]}")  # fmt: skip
        second_beat_log = self.stack.log(getattr(self, "second_beat", "beat.2"))
        first_beat_sent = self.stack.log("beat.1").count("Sending due task")
        second_beat_sent = second_beat_log.count("Sending due task")
        if second_beat_sent:
            problems.append(f"the second beat sent {second_beat_sent} task(s)")
        stuck = self.unacked_at_kill & self.unacked_payments()
        if stuck:
            problems.append(f"{len(stuck)} message(s) of the killed worker never delivered again")
        if exited := self.stack.unexpected_exits():
            problems.append(f"roles exited: {exited}")

        print()
        print("Fault run: figures")
        print(f"  load: {self.minutes:g} min, {self.customer_count} customers + 2 with "
              f"{SLOW_ENDPOINTS} slow endpoints each; visits {dict(self.tally.visits)}; "
              f"refused {dict(self.tally.refused)}")  # fmt: skip
        print(f"  faults: {'; '.join(self.events)}")
        print(f"  HTTP answers: {dict(sorted(self.tally.statuses.items()))}; client-side "
              f"failures {len(self.tally.failures)}")  # fmt: skip
        for failure in self.tally.failures[:10]:
            print(f"    {failure}")
        if latencies:
            p95 = latencies[max(0, round(0.95 * len(latencies)) - 1)]
            print(f"  confirmations (transfer mined -> confirmed), {len(latencies)} transfers: "
                  f"median {statistics.median(latencies):.1f} s, p95 {p95:.1f} s, "
                  f"min {latencies[0]:.1f} s, max {latencies[-1]:.1f} s "
                  "(target < 15 s)")  # fmt: skip
        print("  the slowest confirmations (mined; seen after; confirmed after; purpose):")
        for line in self.slowest(payments, 5):
            print(f"    {line}")
        print(f"  payment emails: {sum(expected.values())} expected, {len(missing)} missing, "
              f"{len(doubled)} twice")  # fmt: skip
        print(
            f"  outbox: {OutboxMessage.objects.count()} messages, {backlog} unpublished at the "
            f"end; {slow.count()} waited more than 2 s to be published (the broker cut), the "
            f"longest {longest.total_seconds() if longest else 0:.1f} s"
        )

        print(f"  slow webhook receiver: {self.trickle.connections} connection(s)")
        print("  /readyz: " + "; ".join(f"{url} {dict(c)}" for url, c in self.readyz.items()))
        print(f"  beat: the first sent {first_beat_sent} task(s), the second {second_beat_sent}")
        print(
            f"  worker-payments.1 SIGKILLed: {len(self.unacked_at_kill)} message(s) it held "
            f"waited for the visibility timeout; still undelivered at the end: {len(stuck)}"
        )
        print(f"  reconcile: {reconcile.strip().splitlines()[-1] if reconcile.strip() else ''}")
        print()
        for problem in problems:
            print(f"PROBLEM: {problem}")
        print("VERDICT:", "nothing lost, confirmations under 15 s" if not problems else "FAILED")
        return not problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=float(os.environ.get("FAULT_MINUTES", 10)))
    parser.add_argument("--customers", type=int, default=int(os.environ.get("FAULT_CUSTOMERS", 6)))
    arguments = parser.parse_args()
    run = FaultRun(arguments.minutes, arguments.customers)
    ok = False
    try:
        run.start()
        run.run_load()
        run.settle()
        ok = run.verdict()
    except StackError as exc:
        print(f"the stack failed: {exc}", file=sys.stderr)
        sys.exit(2)
    finally:
        run.stop_load.set()
        run.trickle.stop()
        if run.proxy:
            run.proxy.cut()
        run.stack.stop()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
