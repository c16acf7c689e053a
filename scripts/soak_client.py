"""A customer's (or operator's) browser for the soak: one HTTP session with its cookies and CSRF
token, through the same pages and forms a person uses. Every answer is counted; an answer other
than the expected one is recorded as an error with the page it came from."""

import base64
import hashlib
import hmac
import html
import re
import struct
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import requests

TIMEOUT_SECONDS = 60
RESTART_WAIT_SECONDS = 60
ORDER_URL = re.compile(r"/account/orders/(\d+)/$")
ALERT = re.compile(r'role="alert"[^>]*>\s*([^<]+?)\s*<')
PAYMENT_URL = re.compile(r"/account/payments/(\d+)/$")
TOTP_SECRET = re.compile(r'data-field="totp-secret">([A-Z2-7=]+)<')
ACTIVATE_TOTP = "/accounts/2fa/totp/activate/"


def totp_now(secret: str) -> str:
    """The 6-digit code an authenticator app shows now for `secret` (RFC 6238: 30 s, SHA-1)."""
    key = base64.b32decode(secret, casefold=True)
    digest = hmac.new(key, struct.pack(">Q", int(time.time()) // 30), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    return f"{(struct.unpack('>I', digest[offset : offset + 4])[0] & 0x7FFFFFFF) % 10**6:06d}"


@dataclass
class Tally:
    """Requests and errors of every client, shared between the driver's threads."""

    requests: Counter = field(default_factory=Counter)
    statuses: Counter = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    slowest: float = 0.0
    restart_waits: int = 0  # seconds spent waiting for runserver to come back
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note_restart_wait(self) -> None:
        with self.lock:
            self.restart_waits += 1

    def record(self, page: str, status: int, seconds: float, error: str | None) -> None:
        with self.lock:
            self.requests[page] += 1
            self.statuses[f"{status // 100}xx" if status else "no answer"] += 1
            self.slowest = max(self.slowest, seconds)
            if error:
                self.errors.append(f"{time.strftime('%H:%M:%S')} {page}: {error}")


class Refused(Exception):
    """The site said no, as it should in that case (409: out of stock, too many unpaid
    orders, balance too small); the message is the page's."""

    @classmethod
    def from_page(cls, what: str, response) -> "Refused":
        alert = ALERT.search(response.text)
        return cls(f"{what}: {html.unescape(alert.group(1)) if alert else 'no message shown'}")


class Browser:
    def __init__(self, base_url: str, tally: Tally):
        self.base_url = base_url
        self.tally = tally
        self.session = requests.Session()

    def _request(self, method: str, path: str, page: str, expect: tuple[int, ...], **kwargs):
        headers = kwargs.pop("headers", {})
        if method == "POST":
            # Django's CSRF check: the cookie's token in the header (the form's field would do).
            headers["X-CSRFToken"] = self.session.cookies.get("csrftoken", "")
        started = time.monotonic()
        while True:
            try:
                response = self.session.request(
                    method,
                    self.base_url + path,
                    headers=headers,
                    timeout=TIMEOUT_SECONDS,
                    allow_redirects=False,
                    **kwargs,
                )
                break
            except requests.ConnectionError as exc:
                # runserver restarts when a source file changes: a refused connection never
                # reached the site, so it is tried again (for a while), as a person would.
                refused = "Connection refused" in str(exc)
                if refused and time.monotonic() - started < RESTART_WAIT_SECONDS:
                    self.tally.note_restart_wait()
                    time.sleep(1)
                    continue
                self.tally.record(page, 0, time.monotonic() - started, f"{type(exc).__name__}")
                raise
            except requests.RequestException as exc:
                self.tally.record(page, 0, time.monotonic() - started, f"{type(exc).__name__}")
                raise
        seconds = time.monotonic() - started
        error = None
        if response.status_code not in expect:
            error = f"{method} {path} answered {response.status_code}, expected {expect}"
        self.tally.record(page, response.status_code, seconds, error)
        return response

    def get(self, path: str, page: str, *, htmx: bool = False, expect=(200,)):
        headers = {"HX-Request": "true"} if htmx else {}
        return self._request("GET", path, page, expect, headers=headers)

    def post(self, path: str, page: str, data: dict, *, expect=(302,)):
        return self._request("POST", path, page, expect, data=data)

    # ----------------------------------------------------------------- accounts

    def sign_up(self, *, email: str, password: str, first_name: str, last_name: str, mailbox):
        """Sign up, then type the code mailed to the address (`mailbox(email)` reads it)."""
        self.get("/accounts/signup/", "signup form")
        response = self.post(
            "/accounts/signup/",
            "signup",
            {
                "first_name": first_name,
                "last_name": last_name,
                "email": email,
                "password1": password,
                "password2": password,
            },
        )
        code_page = response.headers.get("Location", "")
        self.get(code_page, "email code form")
        self.post(code_page, "email code", {"code": mailbox(email)})
        self.get("/account/orders/", "order list")  # logged in: 200, not the login page

    def log_in(self, *, email: str, password: str) -> None:
        self.session.cookies.clear()  # a fresh browser
        self.get("/accounts/login/", "login form")
        self.post("/accounts/login/", "login", {"login": email, "password": password})
        # Logged in: the orders page answers instead of sending to the login page.
        self.get("/account/orders/", "order list")

    def set_up_authenticator(self, *, password: str) -> None:
        """Staff pages need an authenticator app: set it up as a person does (the password again,
        then the code of the secret the page shows)."""
        response = self.get(ACTIVATE_TOTP, "authenticator set-up", expect=(302,))
        password_check = response.headers.get("Location", "")
        self.get(password_check, "password check form")
        self.post(password_check, "password check", {"password": password})
        page = self.get(ACTIVATE_TOTP, "authenticator set-up form")
        secret = TOTP_SECRET.search(page.text)
        if secret:
            self.post(ACTIVATE_TOTP, "authenticator set-up", {"code": totp_now(secret.group(1))})

    # ----------------------------------------------------------------- ordering

    def browse(self, configuration: dict[str, str]) -> None:
        self.get("/", "catalogue")
        self.get("/configure/", "configurator")
        self._request(
            "GET", "/configure/", "configurator summary (htmx)", (200,),
            headers={"HX-Request": "true"}, params=configuration,
        )  # fmt: skip
        self._request("GET", "/order/review/", "review", (200,), params=configuration)

    def order(self, configuration: dict[str, str]) -> int:
        """Confirm the order; its id. Raises Refused on a 409 (the page says why)."""
        response = self.post("/order/confirm/", "confirm order", configuration, expect=(302, 409))
        if response.status_code == 409:
            raise Refused.from_page("order refused", response)
        match = ORDER_URL.search(response.headers.get("Location", ""))
        if not match:
            raise RuntimeError(f"confirm redirected to {response.headers.get('Location')!r}")
        order_id = int(match.group(1))
        self.get(f"/account/orders/{order_id}/", "order page")
        return order_id

    def order_status(self, order_id: int) -> None:
        self.get(f"/account/orders/{order_id}/status/", "order status (htmx)", htmx=True,
                 expect=(200, 204))  # fmt: skip

    def pay_crypto(self, order_id: int, stablecoin: str) -> int:
        response = self.post(
            f"/account/orders/{order_id}/pay/crypto/", "choose stablecoin",
            {"stablecoin": stablecoin}, expect=(302, 409),
        )  # fmt: skip
        if response.status_code == 409:
            raise Refused.from_page("stablecoin refused", response)
        return self._payment_page(response)

    def top_up(self, amount: str, stablecoin: str) -> int:
        self.get("/account/balance/top-up/", "top-up form")
        response = self.post(
            "/account/balance/top-up/", "top up", {"amount": amount, "stablecoin": stablecoin}
        )
        return self._payment_page(response)

    def _payment_page(self, response) -> int:
        match = PAYMENT_URL.search(response.headers.get("Location", ""))
        if not match:
            raise RuntimeError(f"expected a payment page, got {response.headers.get('Location')!r}")
        payment_id = int(match.group(1))
        self.payment_pages(payment_id)
        return payment_id

    def payment_pages(self, payment_id: int) -> None:
        self.get(f"/account/payments/{payment_id}/", "payment page")
        self.get(f"/account/payments/{payment_id}/status/", "payment status (htmx)", htmx=True)

    def declare(self, payment_id: int) -> None:
        self.post(f"/account/payments/{payment_id}/declare/", "declare paid", {"tx_hash": ""})

    def pay_with_balance(self, order_id: int) -> None:
        self.post(f"/account/orders/{order_id}/pay/balance/", "pay with balance", {})
        self.get(f"/account/orders/{order_id}/", "order page")

    def cancel(self, order_id: int) -> None:
        self.post(f"/account/orders/{order_id}/cancel/", "cancel order", {})

    def statement(self) -> None:
        self.get("/account/balance/", "statement")
        self.get("/account/balance/statement.csv", "statement CSV")

    # ----------------------------------------------------------------- operators

    def add_host(self, fields: dict[str, str]) -> None:
        self.get("/ops/hosts/new/", "host form")
        self.post("/ops/hosts/new/", "add host", fields)
