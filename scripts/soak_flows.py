"""What the soak's customers do, and what each of their payments must end as.

Each flow is one customer's visit: log in (or sign up), browse, order, then one way of paying,
chosen at random: the exact amount on the local chain (declared first, or in two transfers, or
with a surplus for the balance), too little, nothing at all, a cancellation, or the USD balance
(topped up on chain first when it is short). Every flow leaves an Expectation: the state its
payment and order must end in, and what it does to the customer's balance.

Runs inside a Django process on the stack's own database (scripts/soak sets it up), which it
only reads, except through the pages and `manage.py pay_local` (the developer's payment tool).
"""

import io
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from django.core.management import call_command
from soak_client import Browser, Refused, Tally

PASSWORD = "soak-password-4f7c"
STABLECOIN = "local:tUSDC"
PAID = frozenset({"paid", "provisioning", "active"})
SCENARIOS = {  # name: weight
    "exact": 22,
    "declared": 8,
    "split": 8,
    "overpaid": 6,
    "underpaid": 10,
    "expired": 10,
    "cancelled": 6,
    "balance": 30,
}
SURPLUS_USD = Decimal("1.23")
# Underpaid orders wait for an operator and count among a customer's unpaid orders (at most
# MAX_UNPAID_ORDERS): new customers keep coming so that most visits can still order.
MAX_CUSTOMERS = 200


def ledger_balance(email: str) -> Decimal:
    """The customer's balance as the ledger holds it now (its cached column)."""
    from payments.models import LedgerAccount, LedgerAccountKind

    account = LedgerAccount.objects.filter(
        kind=LedgerAccountKind.CUSTOMER_BALANCE, customer__email=email
    ).first()
    return account.balance if account else Decimal("0.00")


@dataclass
class Customer:
    email: str
    browser: Browser
    balance: Decimal = Decimal("0.00")  # what the ledger must hold for them
    logged_in: bool = True  # signing up logs in


@dataclass
class Expectation:
    scenario: str
    email: str
    order_id: int | None = None
    payment_id: int | None = None
    payment_status: str | None = None
    review_reason: str = ""
    order_statuses: frozenset[str] = frozenset()


@dataclass
class Driver:
    base_url: str
    rng: random.Random
    mailbox: Callable[[str], str]  # the code last mailed to an address
    tally: Tally = field(default_factory=Tally)
    customers: list[Customer] = field(default_factory=list)
    expectations: list[Expectation] = field(default_factory=list)
    flows: dict[str, int] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    chain_payments: int = 0
    _idle: list[Customer] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _chain_lock: threading.Lock = field(default_factory=threading.Lock)
    _signups: int = 0

    # ------------------------------------------------------------------ setup

    def add_operator_hosts(self, *, ssh_port: int, password: str) -> None:
        """Operators add hosts through /ops/hosts/ (the demo ones would sell out in minutes)."""
        from rental.models import GpuModel

        operator = Browser(self.base_url, self.tally)
        operator.log_in(email="operator@example.com", password=password)
        operator.set_up_authenticator(password=password)  # staff pages need one
        for model in GpuModel.objects.filter(active=True).order_by("pk"):
            for number in range(1, 9):
                operator.add_host(
                    {
                        "name": f"soak-{model.slug}-{number}",
                        "gpu_model": str(model.pk),
                        "cards": "64",
                        "ssh_host": "127.0.0.1",
                        "ssh_port": str(ssh_port),
                        "ssh_user": "ubuntu",
                        "state": "available",
                        "notes": "",
                    }
                )

    def configurations(self) -> list[dict[str, str]]:
        from rental.models import GpuModel

        return [
            {"gpu_model": slug, "duration_days": str(days), "lots": lots, "preparation": prep}
            for slug in GpuModel.objects.filter(active=True).values_list("slug", flat=True)
            for days in (3, 7, 30)
            for lots in ("1", "2")
            for prep in ("ubuntu", "pytorch")
        ]

    # ------------------------------------------------------------------ customers

    def _customer(self) -> Customer:
        """An idle customer, or a new one who signs up (one visit in five, and at first)."""
        with self._lock:
            if self._idle and (len(self.customers) >= MAX_CUSTOMERS or self.rng.random() > 0.2):
                return self._idle.pop(self.rng.randrange(len(self._idle)))
            self._signups += 1
            number = self._signups
        email = f"soak-{number}-{self.rng.randrange(10**6):06d}@example.com"
        browser = Browser(self.base_url, self.tally)
        browser.sign_up(
            email=email,
            password=PASSWORD,
            first_name="Soak",
            last_name=f"N{number}",
            mailbox=self.mailbox,
        )
        customer = Customer(email=email, browser=browser)
        with self._lock:
            self.customers.append(customer)
        return customer

    def _release(self, customer: Customer) -> None:
        with self._lock:
            self._idle.append(customer)

    # ------------------------------------------------------------------ the chain

    def pay(self, payment_id: int, units: int) -> None:
        """Send `units` of tUSDC to the payment's address, as `make pay` does."""
        with self._chain_lock:  # one payer account: one transaction at a time (its nonce)
            call_command("pay_local", str(payment_id), units=str(units), stdout=io.StringIO())
            self.chain_payments += 1

    # ------------------------------------------------------------------ one visit

    def visit(self, configurations: list[dict[str, str]]) -> None:
        scenario = self.rng.choices(list(SCENARIOS), weights=list(SCENARIOS.values()))[0]
        try:
            customer = self._customer()
        except Exception as exc:  # noqa: BLE001 - a failed sign-up is reported, the load goes on
            self._failed("sign-up", exc)
            return
        try:
            # Mostly the browser is still logged in; now and then a fresh one logs in (allauth
            # limits logins to 30 a minute per address, and every customer here is 127.0.0.1).
            if not customer.logged_in or self.rng.random() < 0.15:
                customer.logged_in = False
                customer.browser.log_in(email=customer.email, password=PASSWORD)
                customer.logged_in = True
            configuration = self.rng.choice(configurations)
            customer.browser.browse(configuration)
            try:
                self._scenario(scenario, customer, configuration)
            except Refused as refusal:
                with self._lock:
                    self.refused[str(refusal)] = self.refused.get(str(refusal), 0) + 1
                return
            with self._lock:
                self.flows[scenario] = self.flows.get(scenario, 0) + 1
            customer.browser.statement()
        except Exception as exc:  # noqa: BLE001 - a soak reports every failure and goes on
            self._failed(f"{scenario} ({customer.email})", exc)
        finally:
            self._release(customer)

    def _failed(self, what: str, exc: Exception) -> None:
        with self._lock:
            self.failures.append(f"{time.strftime('%H:%M:%S')} {what}: {type(exc).__name__}: {exc}")

    def _scenario(self, scenario: str, customer: Customer, configuration: dict) -> None:
        from payments.models import CryptoPayment
        from rental.models import Order

        browser = customer.browser
        if scenario == "balance":
            self._balance_visit(customer, configuration)
            return
        order_id = browser.order(configuration)
        payment_id = browser.pay_crypto(order_id, STABLECOIN)
        due = int(CryptoPayment.objects.get(pk=payment_id).amount_due_units)
        expect = Expectation(scenario, customer.email, order_id, payment_id)
        if scenario in ("exact", "declared", "split", "overpaid"):
            expect.payment_status, expect.order_statuses = "confirmed", PAID
            if scenario == "declared":
                browser.declare(payment_id)
            if scenario == "split":
                self.pay(payment_id, due // 3)
                browser.payment_pages(payment_id)
                self.pay(payment_id, due - due // 3)
            elif scenario == "overpaid":
                self.pay(payment_id, due + int(SURPLUS_USD * 10**6))
                customer.balance += SURPLUS_USD
            else:
                self.pay(payment_id, due)
        elif scenario == "underpaid":
            self.pay(payment_id, due // 2)
            expect.payment_status, expect.review_reason = "needs_review", "underpaid"
            expect.order_statuses = frozenset({"payment_review"})
        elif scenario == "expired":
            expect.payment_status, expect.order_statuses = "expired", frozenset({"cancelled"})
        elif scenario == "cancelled":
            browser.cancel(order_id)
            expect.payment_status, expect.order_statuses = "closed", frozenset({"cancelled"})
            status = Order.objects.get(pk=order_id).status
            if status != "cancelled":
                raise AssertionError(f"order {order_id} is {status} after cancelling")
        browser.payment_pages(payment_id)
        browser.order_status(order_id)
        with self._lock:
            self.expectations.append(expect)

    def _balance_visit(self, customer: Customer, configuration: dict) -> None:
        """Pay from the balance; top it up on chain first when it is short, and wait for the
        top-up to be confirmed (reloading the payment page as a customer would)."""
        from payments.models import CryptoPayment
        from rental.models import Order

        browser = customer.browser
        order_id = browser.order(configuration)
        total = Order.objects.get(pk=order_id).total_usd
        available = ledger_balance(customer.email)  # a surplus may still be confirming
        if available < total:
            amount = total - available + Decimal("10.00")
            top_up_id = browser.top_up(str(amount), STABLECOIN)
            due = int(CryptoPayment.objects.get(pk=top_up_id).amount_due_units)
            self.pay(top_up_id, due)
            with self._lock:
                self.expectations.append(
                    Expectation("top-up", customer.email, None, top_up_id, "confirmed")
                )
            deadline = time.monotonic() + 120
            while CryptoPayment.objects.get(pk=top_up_id).status != "confirmed":
                if time.monotonic() > deadline:
                    raise AssertionError(f"top-up {top_up_id} not confirmed after 120 s")
                time.sleep(3)
                browser.payment_pages(top_up_id)
            customer.balance += amount
        browser.pay_with_balance(order_id)
        customer.balance -= total
        with self._lock:
            self.expectations.append(
                Expectation("balance", customer.email, order_id, None, None, "", PAID)
            )
