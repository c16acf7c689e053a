"""README's "Run it on several machines" without Docker: every role of Procfile.production started
as a plain process with the production settings (scripts/production_stack.py: compose.yaml's
migrate job first, then the roles as honcho starts them, on a database, Redis, local chain and
mail server of the test's own), and a customer's order paid through it end to end.

Two web servers behind no proxy: the customer signs up on the first and orders and pays on the
second (one session for both, as behind a load balancer); a wallet pays on the chain; beat, the
payments' worker and the emails' worker do the rest. What the customer sees (the order and
payment pages, the emails), what the database holds (the order, the payment, the ledger) and
that every role named in the Procfile still runs at the end."""

import re
import time
from uuid import uuid4

import pytest
import requests

from scripts.production_stack import ProductionStack, procfile_roles

READY_SECONDS = 240  # the roles' start on a busy 2-core machine, and the first scan of the chain
PAID_SECONDS = 120  # the transfer's confirmations (a block a second), the scan, the settlement
MAIL_SECONDS = 60
PASSWORD = "a-long-and-unusual-passphrase"
CONFIGURATION = {
    "gpu_model": "h100-80gb",
    "duration_days": "3",
    "lots": "1",
    "preparation": "ubuntu",
}
STABLECOIN = "local:tUSDC"
ORDER_URL = re.compile(r"/account/orders/(\d+)/$")
PAYMENT_URL = re.compile(r"/account/payments/(\d+)/$")
CODE = re.compile(r"^\s*([A-Z0-9]{4}-[A-Z0-9]{4})\s*$", re.MULTILINE)
ORDER_STATUS = re.compile(r'data-field="status">([^<]+)<')
PAYMENT_STATUS = re.compile(r'data-field="payment-status">([^<]+)<')
PAID_ON_THE_PAGE = {"Paid", "Provisioning", "Active"}


@pytest.fixture
def stack(tmp_path):
    """The stack, stopped whatever happens; then nothing of it is left: no process, no
    database (its logs stay under tmp_path)."""
    stack = ProductionStack(
        web_servers=2,
        # gunicorn.conf.py reads it: one worker per web server is plenty for one customer.
        role_env={"web": {"WEB_CONCURRENCY": "1"}},
        scratch_dir=tmp_path / "stack",
    )
    try:
        stack.start()
        yield stack
    finally:
        stack.stop()  # raises when a process or the database could not be removed
        assert stack.leftovers() == []
        assert not stack.database_exists()


class Browser:
    """A customer's browser: cookies, the CSRF token sent with each form. Like a browser on
    http://127.0.0.1 (a secure context), it sends the Secure cookies production sets."""

    def __init__(self, base_url: str, stack: ProductionStack):
        self.base_url = base_url
        self.stack = stack
        self.session = requests.Session()

    def request(self, method: str, path: str, expect: int, **kwargs) -> requests.Response:
        for cookie in self.session.cookies:
            cookie.secure = False  # requests sends Secure cookies over https only
        headers = {}
        if method == "POST":
            headers["X-CSRFToken"] = self.session.cookies.get("csrftoken", "")
        url = path if path.startswith("http") else self.base_url + path
        response = self.session.request(
            method, url, headers=headers, timeout=30, allow_redirects=False, **kwargs
        )
        if response.status_code != expect:
            web_logs = [name for name in self.stack.processes if name.startswith("web.")]
            raise AssertionError(
                f"{method} {url} answered {response.status_code} (expected {expect}), "
                f"Location {response.headers.get('Location')!r}:\n{response.text[:1500]}\n"
                + self.stack.tails(40, web_logs)
            )
        return response

    def get(self, path: str, expect: int = 200) -> requests.Response:
        return self.request("GET", path, expect)

    def post(self, path: str, data: dict, expect: int = 302) -> requests.Response:
        return self.request("POST", path, expect, data=data)


def found(pattern: re.Pattern, text: str, what: str) -> str:
    match = pattern.search(text)
    assert match, f"no {what} in:\n{text[:3000]}"
    return match.group(1).strip()


def wait_until(stack: ProductionStack, what: str, read, done, timeout: float):
    """read() until done(value); the value. Fails naming `what`, the last value read and the
    tail of every role's log."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(
                f"{what}: not after {timeout:.0f} s (last: {value!r}); roles exited: "
                f"{stack.exited() or 'none'}\n{stack.tails(30)}"
            )
        time.sleep(0.5)


def test_every_role_of_the_production_procfile_runs_and_an_order_gets_paid(stack):
    roles = procfile_roles()
    assert set(roles) == {process.role for process in stack.processes.values()}
    stack.wait_until_ready(timeout=READY_SECONDS)
    first, second = stack.web_urls

    # Sign up on the first web server, with the code the site mails (through real SMTP).
    email = f"ada-{uuid4().hex[:8]}@example.com"
    browser = Browser(first, stack)
    browser.get("/accounts/signup/")
    signup = {
        "first_name": "Ada",
        "last_name": "Lovelace",
        "email": email,
        "password1": PASSWORD,
        "password2": PASSWORD,
    }
    code_page = browser.post("/accounts/signup/", signup).headers["Location"]
    mail = stack.mail.wait_for(email, "Confirm your email address", timeout=MAIL_SECONDS)
    browser.post(code_page, {"code": found(CODE, mail.body(), "code in the mail")})
    browser.get("/account/orders/")  # logged in: the page, not a redirect to the login

    # Order and pay on the second: the session is the same (Redis and the database).
    browser.base_url = second
    confirmed = browser.post("/order/confirm/", CONFIGURATION)
    order_id = int(found(ORDER_URL, confirmed.headers["Location"], "order URL"))
    order_page = browser.get(f"/account/orders/{order_id}/").text
    assert found(ORDER_STATUS, order_page, "order status") == "Awaiting payment"
    chosen = browser.post(f"/account/orders/{order_id}/pay/crypto/", {"stablecoin": STABLECOIN})
    payment_id = int(found(PAYMENT_URL, chosen.headers["Location"], "payment URL"))
    payment_page = browser.get(f"/account/payments/{payment_id}/").text
    assert found(PAYMENT_STATUS, payment_page, "payment status") == "Waiting for the transfer"

    # The customer's wallet sends the amount due on the local chain; they say they paid.
    sent = stack.manage("pay_local", str(payment_id))
    tx_hash = found(re.compile(r"Transaction: (0x[0-9a-f]{64})"), sent, "transaction hash")
    browser.post(f"/account/payments/{payment_id}/declare/", {"tx_hash": tx_hash})

    def order_status() -> str:
        page = browser.get(f"/account/orders/{order_id}/").text
        return found(ORDER_STATUS, page, "order status")

    wait_until(
        stack, f"order {order_id} paid on its page", order_status, PAID_ON_THE_PAGE.__contains__,
        PAID_SECONDS,
    )  # fmt: skip
    payment_page = browser.get(f"/account/payments/{payment_id}/").text
    assert found(PAYMENT_STATUS, payment_page, "payment status") == "Confirmed"

    reference = f"GR-{order_id:06d}"
    received = stack.mail.wait_for(
        email, f"Payment received for order {reference}", timeout=MAIL_SECONDS
    )
    assert "Ada" in received.body() and reference in received.body()

    with stack.connect() as db:
        order_status, total = db.execute(
            "SELECT status, total_usd FROM rental_order WHERE id = %s", [order_id]
        ).fetchone()
        assert order_status in {"paid", "provisioning", "active"}
        payment = db.execute(
            "SELECT status, received_units = amount_due_units FROM payments_cryptopayment "
            "WHERE id = %s",
            [payment_id],
        ).fetchone()
        assert payment == ("confirmed", True)
        # Counted once: one receipt of the whole amount, one payment of the order, nothing else.
        ledger = db.execute(
            "SELECT t.kind, SUM(e.amount) FILTER (WHERE e.amount > 0), SUM(e.amount) "
            "FROM payments_ledgertransaction t "
            "JOIN payments_ledgerentry e ON e.transaction_id = t.id "
            "WHERE t.payment_id = %s OR t.order_id = %s GROUP BY t.id, t.kind ORDER BY t.id",
            [payment_id, order_id],
        ).fetchall()
        assert ledger == [("crypto_receipt", total, 0), ("order_payment", total, 0)]

    # Every role named in the Procfile was started and runs still; none left meanwhile.
    assert stack.exited() == {}
    for role in roles:
        assert stack.alive(role), f"{role} is not running:\n{stack.tails(60)}"
