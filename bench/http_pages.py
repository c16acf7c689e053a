"""The customer pages under production settings against a bare Django view, over HTTP.

Run with `make bench` (or `.venv/bin/python bench/http_pages.py`; not `http.py`: a script of
that name in bench/ would shadow the standard library's `http` for every script there).

On a throw-away PostgreSQL database (DATABASE_URL's name plus "_http_bench", dropped at the
end) with the demo catalogue, a logged-in customer and an order awaiting a stablecoin payment,
it starts the application with `config.settings.production` under `gunicorn -w 2` and, under
the same gunicorn, a bare Django view (bench/bare/: one `SELECT 1` on the same database with
the same connection settings, a one-line template). `wrk` (the distribution's package) drives
each page at 16 connections with the customer's session cookie (the anonymous catalogue with
none), in rounds that interleave each page with the bare view, and prints req/s, p50, p99 and
the ratio to the bare view (median, min and max over rounds), then the resident memory of a web
worker of each. The catalogue's ratios, logged in and anonymous, go to bench/results.py.

The order page's req/s ÷ bare and its p99 at 4 connections ÷ the bare view's p99 at 4
connections (interleaved rounds) are recorded as `http.order_page.rps_vs_bare` and
`http.order_page.p99_vs_bare_4c` (bench/results.py).

After the runs (and alone with `--memory`), a web worker's memory on fresh servers: the
application (each customer page logged in, and the anonymous catalogue), the bare view and the
application as it was with Celery loaded (bench/celery_loaded_wsgi.py) each serve 1,000
requests per worker (BENCH_MEMORY_REQUESTS) in each of 3 interleaved rounds
(BENCH_MEMORY_ROUNDS); the median worker's resident memory after each round, and its ratio to
bare's, recorded as memory.web_worker_rss_vs_bare (bench/results.py; target ≤ 1.4×).

`--db-modes` compares the ways of holding database connections instead (a new connection per
request, persistent connections with health checks, and psycopg's pool where the psycopg-pool
package is installed: it is not a dependency).

Environment: BENCH_HTTP_ROUNDS (5), BENCH_HTTP_SECONDS (3 per run), BENCH_HTTP_CONNECTIONS
(16); BENCH_HTTP_PAGES, a comma-separated list of page labels ("catalogue, anonymous" is
written "anonymous"), runs only those pages and no memory runs (while iterating). Nothing here
asserts a time.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from http_load import (
    CONNECTIONS,
    ROOT,
    WORKERS,
    Page,
    Series,
    Server,
    bench_database_name,
    check_page,
    database_url_for,
    drop_database,
    ensure_wrk,
    fetch,
    free_port,
    print_table,
    recreate_database,
    spread,
    start_gunicorn,
    wrk,
)
from results import record

PYTHON = sys.executable
ROUNDS = int(os.environ.get("BENCH_HTTP_ROUNDS", "5"))
MEMORY_ROUNDS = int(os.environ.get("BENCH_MEMORY_ROUNDS", "3"))
MEMORY_REQUESTS = int(os.environ.get("BENCH_MEMORY_REQUESTS", "1000"))  # per worker and round
SECONDS = int(os.environ.get("BENCH_HTTP_SECONDS", "3"))
ONLY = [
    label.strip() for label in os.environ.get("BENCH_HTTP_PAGES", "").split(",") if label.strip()
]
# The payment options need an enabled network: the local one, with a token address and an RPC
# URL where nothing listens (the pages never call a node).
BENCH_TOKEN = "0x5FbDB2315678afecb367f032d93F642f64180aa3"


def bench_xpub() -> str:
    """An account xpub for the bench only (account 2 of the public anvil mnemonic): production
    settings refuse the test-only default."""
    from bip_utils import Bip39SeedGenerator, Bip44, Bip44Coins

    seed = Bip39SeedGenerator("test test test test test test test test test test test junk")
    wallet = Bip44.FromSeed(seed.Generate(), Bip44Coins.ETHEREUM).Purpose().Coin().Account(2)
    return wallet.PublicKey().ToExtended()


# ------------------------------------------------------------------------------------ pages


def customer_pages(fixture: dict) -> list[Page]:
    htmx = (("HX-Request", "true"),)
    summary = (
        f"/configure/?gpu_model={fixture['gpu_model']}&duration_days=7&lots=3&preparation=pytorch"
    )
    return [
        Page("catalogue", "/", "Log out"),
        Page(ANONYMOUS_CATALOGUE, "/", "Log in"),
        Page("htmx summary", summary, 'id="summary"', htmx),
        Page("order list", "/account/orders/", fixture["order_reference"]),
        Page("order page", f"/account/orders/{fixture['order_id']}/", 'id="payment-options"'),
        Page(
            "payment status",
            f"/account/payments/{fixture['payment_id']}/status/",
            'id="payment-status"',
            htmx,
        ),
    ]


def chosen(pages: list[Page]) -> list[Page]:
    """The pages BENCH_HTTP_PAGES names, or all."""
    if not ONLY:
        return pages
    names = {"anonymous" if page.label == ANONYMOUS_CATALOGUE else page.label for page in pages}
    unknown = set(ONLY) - names
    if unknown:
        raise SystemExit(f"BENCH_HTTP_PAGES: no page {', '.join(sorted(unknown))}")
    return [
        page
        for page in pages
        if ("anonymous" if page.label == ANONYMOUS_CATALOGUE else page.label) in ONLY
    ]


BARE = Page("bare Django (SELECT 1)", "/", "SELECT 1 gave 1")
# Driven without the customer's cookies: a visitor who is not logged in.
ANONYMOUS_CATALOGUE = "catalogue, anonymous"


def cookie_for(page: Page, cookie: str) -> str:
    return "" if page.label == ANONYMOUS_CATALOGUE else cookie


def interleaved(
    pairs: list[tuple[str, Server, Page]], bare: Server, cookie: str, bare_cookie: str
) -> tuple[Series, dict[str, Series]]:
    """Each (label, server, page) against the bare view, back to back, in ROUNDS rounds; the
    order of the two alternates from round to round."""
    bare_series, series = Series(), {label: Series() for label, _, _ in pairs}
    for number in range(ROUNDS):
        for label, server, page in pairs:
            runs = {}
            order = ("bare", "page") if number % 2 == 0 else ("page", "bare")
            for which in order:
                if which == "bare":
                    runs[which] = wrk(bare, BARE, bare_cookie, SECONDS)
                else:
                    runs[which] = wrk(server, page, cookie_for(page, cookie), SECONDS)
            bare_series.runs.append(runs["bare"])
            series[label].runs.append(runs["page"])
            series[label].ratios.append(runs["page"].rps / runs["bare"].rps)
            series[label].cpu_ratios.append(runs["bare"].cpu_ms / runs["page"].cpu_ms)
        print(f"  round {number + 1}/{ROUNDS} done", flush=True)
    return bare_series, series


# -------------------------------------------------------------------------------- the run


def prepare(workdir: Path, database: str) -> tuple[dict, dict]:
    """Migrate the throw-away database, collect the static files, load the demo catalogue and
    create the customer's data; the application's environment and the fixture's ids."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "SECRET_KEY": "bench-only-secret-key-" + "x" * 40,
        "DATABASE_URL": database_url_for(database),
        "EMAIL_HOST": "127.0.0.1",  # never used: the bench sends no mail
        "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/9"),
        "CACHE_KEY_PREFIX": f"gpu-rental-http-bench-{os.getpid()}",
        "PAYMENT_XPUB": bench_xpub(),
        "SECURE_SSL_REDIRECT": "0",
        "ALLOWED_HOSTS": "127.0.0.1",
        "VAR_DIR": str(workdir / "var"),
        "RPC_URL_LOCAL": f"http://127.0.0.1:{free_port()}",
        "LOCAL_TOKEN_ADDRESS": BENCH_TOKEN,
        "LOG_LEVEL": "ERROR",
    }
    for name in ("DB_CONN_MAX_AGE", "DEBUG"):  # the production defaults are what is measured
        env.pop(name, None)
    manage = [PYTHON, "manage.py"]
    quiet = {"cwd": ROOT, "env": env, "check": True, "stdout": subprocess.DEVNULL}
    subprocess.run([*manage, "migrate", "--noinput"], **quiet)  # noqa: S603
    subprocess.run([*manage, "collectstatic", "--noinput"], **quiet)  # noqa: S603
    subprocess.run([*manage, "load_demo_catalogue"], **quiet)  # noqa: S603
    fixture = subprocess.run(  # noqa: S603
        [PYTHON, "bench/http_fixture.py"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if fixture.returncode:
        raise SystemExit(f"bench/http_fixture.py failed:\n{fixture.stderr[-3000:]}")
    return env, json.loads(fixture.stdout.strip().splitlines()[-1])


def bare_env(app_env: dict, database: dict) -> dict:
    env = {key: value for key, value in app_env.items() if not key.startswith("DJANGO_")}
    return {**env, "BENCH_BARE_DATABASE": json.dumps(database)}


def session_cookies(app: Server, pages: list[Page], fixture: dict) -> str:
    """The customer's session cookie and the CSRF cookie a browser would send back."""
    cookie = fixture["session_cookie"]
    _, _, set_cookies = fetch(app, pages[0], cookie)
    csrf = next((c.split(";")[0] for c in set_cookies if c.startswith("csrftoken=")), None)
    return f"{cookie}; {csrf}" if csrf else cookie


def warm_up(servers_pages: list[tuple[Server, Page, str]]) -> None:
    for server, page, cookie in servers_pages:
        wrk(server, page, cookie, 1)


# Issue 24's req/s targets (they replaced issue 10's "every page >= 0.25x bare, order page p99
# <= 25 ms", set against a floor no plain Django page reaches: bench/plain_pages.py).
REQS_TARGETS = {"catalogue": 0.25, ANONYMOUS_CATALOGUE: 0.6, "order page": 0.15}


def print_targets(pages: list[Page], series: dict[str, Series]) -> None:
    parts = []
    for label, target in REQS_TARGETS.items():
        if label in series:
            ratio = statistics.median(series[label].ratios)
            verdict = "met" if ratio >= target else "not met"
            parts.append(f"{label} {ratio:.2f}× bare ({verdict}: ≥ {target}×)")
    print(f"Targets (issue 24): {'; '.join(parts)}")


ORDER_PAGE_TARGET = 0.15
P99_CONNECTIONS = 4


def order_page_figures(
    app: Server, bare: Server, page: Page, cookie: str, series: dict[str, Series]
) -> None:
    """Issue 24's order page figures: req/s ÷ bare (the rounds above), and the p99 latency at
    P99_CONNECTIONS connections against the bare view's at as many, in ROUNDS interleaved
    rounds (recorded in var/bench/results.json)."""
    ratios = series[page.label].ratios
    record("http.order_page.rps_vs_bare", ratios, note=f"wrk {CONNECTIONS} connections")
    page_p99, bare_p99, p99_ratios = [], [], []
    for number in range(ROUNDS):
        runs = {}
        for which in ("bare", "page") if number % 2 == 0 else ("page", "bare"):
            server, target, who = (bare, BARE, "") if which == "bare" else (app, page, cookie)
            runs[which] = wrk(server, target, who, SECONDS, connections=P99_CONNECTIONS)
        page_p99.append(runs["page"].p99_ms)
        bare_p99.append(runs["bare"].p99_ms)
        p99_ratios.append(runs["page"].p99_ms / runs["bare"].p99_ms)
    record(
        "http.order_page.p99_vs_bare_4c",
        p99_ratios,
        note=f"p99 at {P99_CONNECTIONS} connections ÷ bare's",
    )
    verdict = "met" if statistics.median(ratios) >= ORDER_PAGE_TARGET else "not met"
    print(
        f"Order page: req/s ÷ bare {spread(ratios, 2)} (target ≥ {ORDER_PAGE_TARGET}: "
        f"{verdict}); p99 at {P99_CONNECTIONS} connections {spread(page_p99, 1)} ms against "
        f"bare {spread(bare_p99, 1)} ms: {spread(p99_ratios, 1)}× bare's p99 ({ROUNDS} "
        f"interleaved rounds of {SECONDS} s)",
        flush=True,
    )


def rss_line(app: Server, bare: Server) -> None:
    app_rss, bare_rss = app.worker_rss_mb(), bare.worker_rss_mb()
    ratio = statistics.median(app_rss) / statistics.median(bare_rss)
    print(
        f"Web worker RSS after the runs: application {statistics.median(app_rss):.1f} MB "
        f"(workers: {', '.join(f'{size:.1f}' for size in app_rss)}), bare Django "
        f"{statistics.median(bare_rss):.1f} MB "
        f"(workers: {', '.join(f'{size:.1f}' for size in bare_rss)}): {ratio:.2f}× bare "
        f"(target ≤ 1.4×)"
    )


def serve(server: Server, requests: list[tuple[Page, str]], count: int) -> None:
    """`count` requests, cycling through `requests` (page, cookie), from WORKERS clients at
    once so that every worker serves its share; each must answer 200."""

    def client(offset: int) -> None:
        for number in range(offset, count, WORKERS):
            page, cookie = requests[number % len(requests)]
            status, _, _ = fetch(server, page, cookie)
            if status != 200:
                raise SystemExit(f"{server.name} {page.path}: HTTP {status}")

    with ThreadPoolExecutor(WORKERS) as pool:
        for done in [pool.submit(client, offset) for offset in range(WORKERS)]:
            done.result()


def memory(app_env: dict, fixture: dict, workdir: Path) -> None:
    """A web worker's resident memory after MEMORY_REQUESTS requests each, in MEMORY_ROUNDS
    interleaved rounds (fresh servers): the application (every customer page, logged in, and
    the anonymous catalogue) against the bare Django view, and against the application as it
    was with Celery and kombu loaded (bench/celery_loaded_wsgi.py). Records each round's ratio
    to bare as memory.web_worker_rss_vs_bare (bench/results.py)."""
    servers = []
    try:
        app = start_gunicorn("memory-app", "config.wsgi:application", app_env, workdir)
        servers.append(app)
        bare = start_gunicorn(
            "memory-bare",
            "bench.bare.wsgi:application",
            bare_env(app_env, fixture["database"]),
            workdir,
        )
        servers.append(bare)
        before = start_gunicorn(
            "memory-app-with-celery", "bench.celery_loaded_wsgi:application", app_env, workdir
        )
        servers.append(before)
        pages = customer_pages(fixture)
        cookie = session_cookies(app, pages, fixture)
        for server in (app, before):
            for page in pages:
                check_page(server, page, cookie_for(page, cookie))
        check_page(bare, BARE, "")
        workload = {
            app.name: [(page, cookie_for(page, cookie)) for page in pages],
            before.name: [(page, cookie_for(page, cookie)) for page in pages],
            bare.name: [(BARE, "")],
        }
        sizes = {app.name: [], bare.name: [], before.name: []}
        order = [app, bare, before]
        pids = {server.name: server.worker_pids() for server in order}
        for number in range(MEMORY_ROUNDS):
            for server in order[number % 3 :] + order[: number % 3]:
                serve(server, workload[server.name], MEMORY_REQUESTS * WORKERS)
                sizes[server.name].append(statistics.median(server.worker_rss_mb()))
                if server.worker_pids() != pids[server.name]:  # a fresh worker is smaller
                    print(f"  {server.name}: gunicorn replaced a worker in this round")
                    pids[server.name] = server.worker_pids()
            print(f"  memory round {number + 1}/{MEMORY_ROUNDS} done", flush=True)
    finally:
        for server in servers:
            server.stop()

    def mb(values: list[float]) -> str:
        return f"{statistics.median(values):.1f} MB ({min(values):.1f}–{max(values):.1f})"

    app_mb, bare_mb, before_mb = sizes[app.name], sizes[bare.name], sizes[before.name]
    ratios = [a / b for a, b in zip(app_mb, bare_mb, strict=True)]
    then = [b / a for a, b in zip(app_mb, before_mb, strict=True)]
    record(
        "memory.web_worker_rss_vs_bare",
        ratios,
        note=f"app {statistics.median(app_mb):.1f} MB, bare "
        f"{statistics.median(bare_mb):.1f} MB after {MEMORY_REQUESTS} requests per worker",
    )
    record("memory.web_worker_rss_mb", app_mb, unit="MB")
    record("memory.bare_worker_rss_mb", bare_mb, unit="MB")
    print(
        f"Web worker RSS after {MEMORY_REQUESTS} requests per worker, gunicorn -w {WORKERS}, "
        f"{MEMORY_ROUNDS} interleaved rounds (median of the workers, median (min–max) over "
        f"rounds): application {mb(app_mb)}, bare Django {mb(bare_mb)}: "
        f"{statistics.median(ratios):.2f}× bare ({min(ratios):.2f}–{max(ratios):.2f}; "
        f"target ≤ 1.4×); with Celery and kombu loaded as before {mb(before_mb)}, "
        f"{statistics.median(then):.2f}× today's application",
        flush=True,
    )


def run_pages(workdir: Path, app_env: dict, fixture: dict) -> None:
    servers = []
    try:
        app = start_gunicorn("app", "config.wsgi:application", app_env, workdir)
        servers.append(app)
        bare = start_gunicorn(
            "bare", "bench.bare.wsgi:application", bare_env(app_env, fixture["database"]), workdir
        )
        servers.append(bare)
        pages = chosen(customer_pages(fixture))
        cookie = session_cookies(app, customer_pages(fixture), fixture)
        for page in pages:
            check_page(app, page, cookie_for(page, cookie))
        check_page(bare, BARE, "")
        warm_up([(app, page, cookie_for(page, cookie)) for page in pages] + [(bare, BARE, "")])
        database = fixture["database"]
        print(
            f"HTTP: {fixture['settings_module']} under gunicorn -w {WORKERS} (sync), wrk "
            f"{CONNECTIONS} connections, {ROUNDS} rounds of {SECONDS} s per page, each page "
            f"back to back with the bare view; CONN_MAX_AGE={database.get('CONN_MAX_AGE')}, "
            f"health checks {database.get('CONN_HEALTH_CHECKS')}, "
            f"pool {bool(database.get('OPTIONS', {}).get('pool'))}",
            flush=True,
        )
        bare_series, series = interleaved(
            [(page.label, app, page) for page in pages], bare, cookie, ""
        )
        print_table(
            "Median (min–max) over rounds",
            [(BARE.label, bare_series)] + [(page.label, series[page.label]) for page in pages],
        )
        print_targets(pages, series)
        if "catalogue" in series:
            record("http.catalogue_logged_in.rps_vs_bare", series["catalogue"].ratios)
        if ANONYMOUS_CATALOGUE in series:
            record("http.catalogue_anonymous.rps_vs_bare", series[ANONYMOUS_CATALOGUE].ratios)
        order_page = next((page for page in pages if page.label == "order page"), None)
        if order_page is not None:
            order_page_figures(app, bare, order_page, cookie, series)
        rss_line(app, bare)
    finally:
        for server in servers:
            server.stop()
    if not ONLY:
        memory(app_env, fixture, workdir)


def run_db_modes(workdir: Path, app_env: dict, fixture: dict) -> None:
    """The same pages with each way of holding database connections, against the bare view
    (which keeps the application's default)."""
    modes = {
        "new connection per request": {**app_env, "DB_CONN_MAX_AGE": "0"},
        "persistent (60 s, health checks)": {**app_env, "DB_CONN_MAX_AGE": "60"},
    }
    try:
        import psycopg_pool  # noqa: F401

        modes["psycopg pool"] = {**app_env, "DJANGO_SETTINGS_MODULE": "bench.pool_settings"}
    except ImportError:
        print("psycopg_pool is not installed: the pool is not measured")
    servers = []
    try:
        bare = start_gunicorn(
            "bare", "bench.bare.wsgi:application", bare_env(app_env, fixture["database"]), workdir
        )
        servers.append(bare)
        apps = {}
        for number, (mode, env) in enumerate(modes.items()):
            apps[mode] = start_gunicorn(f"app-{number}", "config.wsgi:application", env, workdir)
            servers.append(apps[mode])
        pages = [
            page for page in customer_pages(fixture) if page.label in ("catalogue", "order page")
        ]
        cookie = session_cookies(next(iter(apps.values())), pages, fixture)
        for server in apps.values():
            for page in pages:
                check_page(server, page, cookie_for(page, cookie))
        warm_up([(server, page, cookie) for server in apps.values() for page in pages])
        pairs = [
            (f"{page.label}: {mode}", server, page)
            for page in pages
            for mode, server in apps.items()
        ]
        print(f"Database connections: {ROUNDS} rounds of {SECONDS} s, gunicorn -w {WORKERS} sync")
        bare_series, series = interleaved(pairs, bare, cookie, "")
        rows = [(BARE.label, bare_series), *series.items()]
        print_table("Median (min–max) over rounds", rows)
    finally:
        for server in servers:
            server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db-modes", action="store_true", help="compare connection settings")
    parser.add_argument(
        "--memory",
        action="store_true",
        help="only the web worker's memory, against bare Django and with Celery loaded",
    )
    arguments = parser.parse_args()
    ensure_wrk()
    workdir = Path(tempfile.mkdtemp(prefix="gpu-rental-http-bench-"))
    database = bench_database_name()
    recreate_database(database)
    try:
        app_env, fixture = prepare(workdir, database)
        if arguments.db_modes:
            run_db_modes(workdir, app_env, fixture)
        elif arguments.memory:
            memory(app_env, fixture, workdir)
        else:
            run_pages(workdir, app_env, fixture)
    finally:
        drop_database(database)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
