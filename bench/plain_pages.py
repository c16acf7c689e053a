"""Each customer page against a plain Django page of the same content (issue 24's first target).

A plain peer (bench/plain_views.py, bench/plain_templates/plain/) is the page written the
ordinary way: an ordinary view with ordinary ORM queries and a template using `url`,
`translate`, `static` and `blocktranslate`, with the same models, prices, ids and texts, the
navigation, the user's name and a logout form with CSRF, in a layout of its own (the site's
base.html as it was written before issue 24). Both are served by the same settings
(production settings; bench/plain_settings.py adds the peers under /_plain/), the same
middleware and the same database (prepared as bench/http_pages.py does: the demo catalogue,
a logged-in customer with orders awaiting payment and a stablecoin payment).

In one process, through the WSGI handler (no HTTP, as bench/http_floor.py): each round
measures each page and its peer back to back (the order alternates from round to round), in
worker CPU milliseconds per request (`time.process_time`) over BENCH_PLAIN_CALLS (200)
requests, over BENCH_PLAIN_ROUNDS (5) rounds. It prints page ÷ plain, median (min–max), and
records each as `pages.cpu_vs_plain.<page>` (bench/results.py). Before measuring it compares
the visible text of both responses: the key values (order and payment references, prices,
the customer's name) must appear in both, and their word counts are printed side by side.

BENCH_PLAIN_PAGES (a comma-separated list of labels) measures only those pages.
`--profile PAGE` prints a cProfile of BENCH_PLAIN_CALLS requests of one page (or of its peer:
`--profile plain:PAGE`) instead. BENCH_PLAIN_WORKDIR keeps the prepared database between
runs (for profiling; dropped otherwise). Nothing here asserts a time.
"""

import argparse
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from html import unescape
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from http_load import ROOT, bench_database_name, drop_database, recreate_database  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_PLAIN_ROUNDS", "5"))
CALLS = int(os.environ.get("BENCH_PLAIN_CALLS", "200"))
TARGET = 1.0


def pages(fixture: dict) -> dict[str, tuple[str, str]]:
    """label: (our page, its plain peer)."""
    order, payment = fixture["order_id"], fixture["payment_id"]
    return {
        "catalogue": ("/", "/_plain/"),
        "configure": ("/configure/", "/_plain/configure/"),
        "order_list": ("/account/orders/", "/_plain/orders/"),
        "order_page": (f"/account/orders/{order}/", f"/_plain/orders/{order}/"),
        "payment_page": (f"/account/payments/{payment}/", f"/_plain/payments/{payment}/"),
        "statement": ("/account/balance/", "/_plain/balance/"),
        "receipts": ("/account/receipts/", "/_plain/receipts/"),
    }


def visible_text(html: str) -> str:
    html = re.sub(r"(?is)<(script|style)\b.*?</\1>", " ", html)
    html = re.sub(r"(?s)<[^>]+>", " ", html)
    return re.sub(r"\s+", " ", unescape(html)).strip()


# ------------------------------------------------------------------------------ the child


def child(fixture: dict, mode: str, argument: str) -> None:
    sys.path.insert(0, str(ROOT))
    from django.core.wsgi import get_wsgi_application

    app = get_wsgi_application()
    cookie = fixture["session_cookie"]

    def call(path: str) -> str:
        route, _, query = path.partition("?")
        environ = {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": route,
            "QUERY_STRING": query,
            "SERVER_NAME": "127.0.0.1",
            "SERVER_PORT": "8000",
            "HTTP_HOST": "127.0.0.1",
            "REMOTE_ADDR": "127.0.0.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "HTTP_COOKIE": cookie,
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(b""),
            "wsgi.errors": sys.stderr,
        }
        status = []
        body = b"".join(app(environ, lambda line, headers, exc_info=None: status.append(line)))
        if not status[0].startswith("200"):
            raise SystemExit(f"{path}: {status[0]}\n{body.decode()[:3000]}")
        return body.decode()

    table = pages(fixture)
    only = os.environ.get("BENCH_PLAIN_PAGES")
    if only and mode == "measure":
        table = {label: paths for label, paths in table.items() if label in only.split(",")}
    if mode == "text":
        for label, paths in table.items():
            if argument and label != argument:
                continue
            for path in paths:
                print(f"===== {label} {path}\n{visible_text(call(path))}\n")
        return
    if mode == "profile":
        import cProfile
        import pstats

        which, _, label = argument.rpartition(":")
        path = table[label][1 if which == "plain" else 0]
        for _ in range(20):
            call(path)
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(CALLS):
            call(path)
        profiler.disable()
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_stats(45)
        stats.sort_stats("tottime").print_stats(30)
        return
    # The visible text of both sides: the same key values, about as much text.
    checks = {}
    for label, (page, plain) in table.items():
        ours, theirs = visible_text(call(page)), visible_text(call(plain))
        keys = fixture["keys"].get(label, []) + fixture["keys"]["every"]
        missing = [key for key in keys if key not in ours or key not in theirs]
        if missing:
            raise SystemExit(f"{label}: {missing} not in both pages\n{ours}\n----\n{theirs}")
        checks[label] = (len(ours.split()), len(theirs.split()))
    print(json.dumps({"words": checks}), flush=True)
    for page, plain in table.values():
        for _ in range(20):  # warm: templates, statement caches, connections
            call(page)
            call(plain)
    for number in range(ROUNDS):
        result = {}
        for label, (page, plain) in table.items():
            order = (page, plain) if number % 2 == 0 else (plain, page)
            measured = {}
            for path in order:
                start = time.process_time()
                for _ in range(CALLS):
                    call(path)
                measured[path] = (time.process_time() - start) * 1000 / CALLS
            result[label] = [measured[page], measured[plain]]
        print(json.dumps({"round": result}), flush=True)


# ------------------------------------------------------------------------------- the run


def prepared(workdir: Path, database: str) -> tuple[dict, dict]:
    from http_pages import prepare

    saved = workdir / "plain-fixture.json"
    if saved.exists():
        return json.loads(saved.read_text())
    recreate_database(database)
    env, fixture = prepare(workdir, database)
    env = {**env, "DJANGO_SETTINGS_MODULE": "bench.plain_settings"}
    keys = subprocess.run(  # noqa: S603
        [sys.executable, __file__, "--keys"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if keys.returncode:
        raise SystemExit(f"--keys failed:\n{keys.stderr[-3000:]}")
    fixture["keys"] = json.loads(keys.stdout.strip().splitlines()[-1])
    saved.write_text(json.dumps([env, fixture]))
    return env, fixture


def keys_of_pages() -> None:
    """The values both sides of each page must show (printed as JSON for the parent)."""
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.utils.formats import number_format

    from accounts.models import User
    from rental.models import GpuModel, Order

    customer = User.objects.get(email="bench-customer@example.com")
    orders = list(Order.objects.filter(customer=customer).order_by("-pk"))
    order = orders[0]
    models = list(GpuModel.objects.filter(active=True).order_by("pk"))

    def usd(value) -> str:
        return number_format(value, decimal_pos=2, use_l10n=True, force_grouping=True)

    prices = [usd(price.price_usd) for model in models for price in model.lot_prices.all()[:1]]
    print(
        json.dumps(
            {
                "every": ["Log out", "My orders"],
                "catalogue": [model.name for model in models] + prices,
                "configure": [model.name for model in models],
                "order_list": [o.reference for o in orders] + [usd(o.total_usd) for o in orders],
                "order_page": [order.reference, order.model_name, usd(order.total_usd)],
                "payment_page": [order.reference, usd(order.total_usd)],
                "statement": [],
                "receipts": [],
            }
        )
    )


def spread(values, digits=2):
    low, middle, high = min(values), statistics.median(values), max(values)
    return f"{middle:.{digits}f} ({low:.{digits}f}–{high:.{digits}f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", metavar="PAGE", help="cProfile one page ([plain:]label)")
    parser.add_argument("--text", metavar="PAGE", nargs="?", const="", help="print visible text")
    arguments = parser.parse_args()
    keep = os.environ.get("BENCH_PLAIN_WORKDIR")
    workdir = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="gpu-rental-plain-"))
    workdir.mkdir(parents=True, exist_ok=True)
    database = bench_database_name() + "_plain"
    try:
        env, fixture = prepared(workdir, database)
        mode, argument = "measure", ""
        if arguments.profile:
            mode, argument = "profile", arguments.profile
        elif arguments.text is not None:
            mode, argument = "text", arguments.text
        command = [sys.executable, __file__, "--child", json.dumps(fixture), mode, argument]
        env = {
            **env,
            "BENCH_PLAIN_ROUNDS": str(ROUNDS),
            "BENCH_PLAIN_CALLS": str(CALLS),
            "BENCH_PLAIN_PAGES": os.environ.get("BENCH_PLAIN_PAGES", ""),
        }
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)  # noqa: S603
        rounds = []
        for line in process.stdout:
            if mode != "measure":
                print(line, end="")
                continue
            data = json.loads(line)
            if "words" in data:
                print(
                    "Visible words, page / plain peer: "
                    + ", ".join(
                        f"{label} {ours}/{theirs}"
                        for label, (ours, theirs) in data["words"].items()
                    )
                )
            else:
                rounds.append(data["round"])
                print(f"  round {len(rounds)}/{ROUNDS} done", flush=True)
        if process.wait():
            raise SystemExit(f"the child failed ({process.returncode})")
        if mode != "measure":
            return
        from results import record

        print(
            f"Customer pages against a plain Django page of the same content: worker CPU ms "
            f"per request through the WSGI handler, one process, median (min–max) of {ROUNDS} "
            f"interleaved rounds of {CALLS} requests, production settings; target ≤ {TARGET}×"
        )
        print(f"  {'page':<14}{'CPU ms':>22}{'plain CPU ms':>22}{'page ÷ plain':>22}")
        for label in rounds[0]:
            ours = [r[label][0] for r in rounds]
            plain = [r[label][1] for r in rounds]
            ratios = [a / b for a, b in zip(ours, plain, strict=True)]
            record(f"pages.cpu_vs_plain.{label}", ratios, note="CPU per request ÷ plain peer")
            verdict = "met" if statistics.median(ratios) <= TARGET else "not met"
            print(
                f"  {label:<14}{spread(ours):>22}{spread(plain):>22}{spread(ratios):>22} {verdict}"
            )
    finally:
        if not keep:
            drop_database(database)
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(json.loads(sys.argv[2]), sys.argv[3], sys.argv[4])
    elif len(sys.argv) > 1 and sys.argv[1] == "--keys":
        keys_of_pages()
    else:
        main()
