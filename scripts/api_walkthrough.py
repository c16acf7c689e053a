#!/usr/bin/env python3
"""The README's API walkthrough, no page clicked: a token in, an order paid and active out.

    scripts/api_walkthrough.py --token gr_... [--base http://127.0.0.1:8000] [--listen 8765]

1. starts a small webhook receiver on 127.0.0.1 (--listen) that checks every signature;
2. registers it as a webhook endpoint for order.paid and order.active;
3. asks for a quote, creates the order and pays it from the USD balance, each POST with an
   Idempotency-Key (running a step twice replays its first answer);
4. waits for order.paid, then for order.active (an operator prepares the hosts meanwhile:
   `manage.py ops_mark_prepared <order id> --operator operator@example.com` on make run),
   and prints the access details the webhook carried.

Standard library only. Exit status 0 once order.active arrived, 1 on an API error or when
--wait minutes passed without it.
"""

import argparse
import base64
import hashlib
import hmac
import http.server
import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid


def api(base: str, token: str, method: str, path: str, body: dict | None = None) -> dict:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
        headers["Idempotency-Key"] = str(uuid.uuid4())
    request = urllib.request.Request(base + path, data=data, headers=headers, method=method)  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            return json.load(response)
    except urllib.error.HTTPError as error:
        problem = json.loads(error.read() or b"{}")
        raise SystemExit(
            f"{method} {path}: {error.code} {problem.get('title', '')}: {problem.get('detail', '')}"
            + "".join(f"\n  {e['field']}: {e['message']}" for e in problem.get("errors", []))
        ) from None


def verify(secret: str, body: bytes, headers) -> bool:
    """Standard Webhooks, with the standard library only: HMAC-SHA256 with the key
    base64-decoded from after `whsec_`, over "<webhook-id>.<webhook-timestamp>.<body>", one of
    the space-separated `v1,<base64>` signatures; no timestamp older than 5 minutes."""
    msg_id = headers.get("webhook-id", "")
    timestamp = headers.get("webhook-timestamp", "")
    if not msg_id or not timestamp.isascii() or not timestamp.isdigit():
        return False
    if abs(time.time() - int(timestamp)) > 300:
        return False
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{msg_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    return any(
        hmac.compare_digest(f"v1,{expected}", candidate)
        for candidate in headers.get("webhook-signature", "").split(" ")
    )


class Receiver(http.server.BaseHTTPRequestHandler):
    secret = ""
    events: dict[str, dict] = {}
    seen_ids: set[str] = set()
    arrived = threading.Condition()

    def do_POST(self):  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not verify(self.secret, body, self.headers):
            self.send_response(401)
            self.end_headers()
            print("  webhook refused: bad signature or old timestamp", flush=True)
            return
        event = json.loads(body)
        self.send_response(204)
        self.end_headers()
        with self.arrived:
            event_id = self.headers["webhook-id"]
            if event_id in self.seen_ids:  # delivered at least once: deduplicate on the id
                return
            self.seen_ids.add(event_id)
            self.events[event["type"]] = event
            print(f"  webhook {event['type']} ({event_id})", flush=True)
            self.arrived.notify_all()

    def log_message(self, *args):
        pass


def wait_for(event_type: str, deadline: float) -> dict | None:
    with Receiver.arrived:
        next_note = time.monotonic() + 15
        while event_type not in Receiver.events:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            Receiver.arrived.wait(min(left, 5))
            if time.monotonic() >= next_note:
                print(f"  still waiting for {event_type}…", flush=True)
                next_note = time.monotonic() + 15
        return Receiver.events[event_type]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="http://127.0.0.1:8000")
    parser.add_argument("--token", default=os.environ.get("GPU_RENTAL_TOKEN", ""))
    parser.add_argument("--listen", type=int, default=8765, help="the webhook receiver's port")
    parser.add_argument("--model", default="h100-80gb")
    parser.add_argument("--days", type=int, default=3)
    parser.add_argument("--lots", type=int, default=1)
    parser.add_argument("--wait", type=float, default=15, help="minutes to wait for order.active")
    options = parser.parse_args()
    if not options.token:
        parser.error("give --token (or GPU_RENTAL_TOKEN): manage.py api_token_create EMAIL")
    base, token = options.base.rstrip("/"), options.token

    server = http.server.ThreadingHTTPServer(("127.0.0.1", options.listen), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    hook = f"http://127.0.0.1:{server.server_address[1]}/hook"
    endpoint = api(
        base,
        token,
        "POST",
        "/api/v1/webhooks/endpoints/",
        {"url": hook, "events": ["order.paid", "order.active"]},
    )
    Receiver.secret = endpoint["secret"]
    print(f"1. webhook endpoint {endpoint['id']} → {hook}")

    configuration = {
        "gpu_model": options.model,
        "duration_days": options.days,
        "lots": options.lots,
        "preparation": "pytorch",
    }
    quote = api(base, token, "POST", "/api/v1/quote/", configuration)
    print(
        f"2. quote: {quote['lots']} × {quote['lot_price_usd']} USD = {quote['total_usd']} USD "
        f"(cards: {quote['total_cards']}, days: {quote['duration_days']})"
    )
    order = api(base, token, "POST", "/api/v1/orders/", configuration)
    print(f"3. order {order['reference']} (id {order['id']}): {order['status']}")
    paid = api(base, token, "POST", f"/api/v1/orders/{order['id']}/pay/balance/", {})
    print(f"4. paid from the balance: {paid['status']}")

    deadline = time.monotonic() + options.wait * 60
    if wait_for("order.paid", deadline) is None:
        print("order.paid did not arrive: is the Celery worker running?")
        return 1
    print(
        "5. waiting for order.active: an operator prepares the hosts, e.g.\n"
        f"   .venv/bin/python manage.py ops_mark_prepared {order['id']} "
        "--operator operator@example.com --notes 'PyTorch in /opt/venv'"
    )
    active = wait_for("order.active", deadline)
    if active is None:
        print(f"order.active did not arrive within {options.wait:g} minutes")
        return 1
    access = active["data"]["access"]
    print(f"6. {order['reference']} is active until {active['data']['order']['ends_at']}")
    for host in access["hosts"]:
        print(f"   {host['ssh_command']}   (cards {', '.join(map(str, host['cards']))})")
    if access.get("notes"):
        print(f"   notes: {access['notes']}")
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
