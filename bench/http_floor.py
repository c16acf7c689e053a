"""What a page of ours costs before it does anything, against the bare Django view.

bench/http_pages.py compares each customer page with a bare Django view (bench/bare/: no
middleware, no app, one `SELECT 1`, a one-line template). This script measures the floor under
those pages, in worker CPU milliseconds per request through the WSGI handler in one process
(no HTTP, no load generator: only the worker's own work, which is what the req/s ratio divides):

- the bare view, in a process with bench/bare/'s settings;
- an empty response behind the application's middleware, for a logged-in customer (session,
  user, CSRF, locale, messages, security headers) and for an anonymous visitor;
- an empty page in the site's layout (base.html: navigation, language switch) for both;
- the catalogue (logged in and anonymous) and the order page, for scale.

Production settings (bench/floor_settings.py adds the two empty pages), on a throw-away
PostgreSQL database prepared as bench/http_pages.py does, Redis from REDIS_URL. The two
processes alternate over BENCH_FLOOR_ROUNDS (5) rounds of BENCH_FLOOR_CALLS (300) requests per
page; the table gives the median (min–max) and bare ÷ page, the ratio bench/http_pages.py's
req/s ratios can at best reach. The logged-in requests send the session cookie and the CSRF
cookie the first page set, as a browser (and bench/http_pages.py) does; the empty page's
template is compiled once. Nothing here asserts a time.
"""

import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from http_load import ROOT, bench_database_name, drop_database, recreate_database  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_FLOOR_ROUNDS", "5"))
CALLS = int(os.environ.get("BENCH_FLOOR_CALLS", "300"))


def child(mode: str, paths: list[list], cookie: str) -> None:
    """Runs in its own process: each path CALLS times, prints {label: cpu ms per request}."""
    sys.path.insert(0, str(ROOT))
    from django.core.wsgi import get_wsgi_application

    app = get_wsgi_application()
    csrf_cookie = [""]

    def call(path: str, logged_in: bool) -> None:
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
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(b""),
            "wsgi.errors": sys.stderr,
        }
        if logged_in:
            environ["HTTP_COOKIE"] = cookie + csrf_cookie[0]
        status, headers_seen = [], []

        def start_response(line, headers, exc_info=None):
            status.append(line)
            headers_seen.extend(headers)

        b"".join(app(environ, start_response))
        if not status[0].startswith("200"):
            raise SystemExit(f"{mode} {path}: {status[0]}")
        if logged_in and not csrf_cookie[0]:
            # The CSRF cookie a browser sends back, as bench/http_pages.py's wrk runs do.
            for name, value in headers_seen:
                if name.lower() == "set-cookie" and value.startswith("csrftoken="):
                    csrf_cookie[0] = "; " + value.split(";")[0]

    result = {}
    for label, path, logged_in in paths:
        for _ in range(20):  # warm: templates, statement caches, connections
            call(path, logged_in)
        start = time.process_time()
        for _ in range(CALLS):
            call(path, logged_in)
        result[label] = (time.process_time() - start) * 1000 / CALLS
    print(json.dumps(result))


def run_child(mode: str, env: dict, paths: list, cookie: str) -> dict:
    done = subprocess.run(  # noqa: S603
        [sys.executable, __file__, "--child", mode, json.dumps(paths), cookie],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(f"the {mode} process failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    from http_pages import bare_env, prepare

    workdir = Path(tempfile.mkdtemp(prefix="gpu-rental-http-floor-"))
    database = bench_database_name() + "_floor"
    recreate_database(database)
    try:
        app_env, fixture = prepare(workdir, database)
        app_env = {**app_env, "DJANGO_SETTINGS_MODULE": "bench.floor_settings"}
        bare = {
            **bare_env(app_env, fixture["database"]),
            "DJANGO_SETTINGS_MODULE": "bench.bare.settings",
        }
        order_page = f"/account/orders/{fixture['order_id']}/"
        app_paths = [
            ["empty response, logged in", "/_floor/response/", True],
            ["empty response, anonymous", "/_floor/response/?anonymous", False],
            ["empty page (base.html), logged in", "/_floor/page/", True],
            ["empty page (base.html), anonymous", "/_floor/page/", False],
            ["catalogue, logged in", "/", True],
            ["catalogue, anonymous", "/", False],
            ["order page, logged in", order_page, True],
        ]
        bare_paths = [["bare Django (SELECT 1)", "/", False]]
        runs: dict[str, list[float]] = {}
        ratios: dict[str, list[float]] = {}
        cookie = fixture["session_cookie"]
        for number in range(ROUNDS):
            order = ("bare", "app") if number % 2 == 0 else ("app", "bare")
            measured = {}
            for which in order:
                if which == "bare":
                    measured.update(run_child("bare", bare, bare_paths, ""))
                else:
                    measured.update(run_child("app", app_env, app_paths, cookie))
            baseline = measured[bare_paths[0][0]]
            for label, value in measured.items():
                runs.setdefault(label, []).append(value)
                ratios.setdefault(label, []).append(baseline / value)
            print(f"  round {number + 1}/{ROUNDS} done", flush=True)

        def spread(values, digits):
            low, middle, high = min(values), statistics.median(values), max(values)
            return f"{middle:.{digits}f} ({low:.{digits}f}–{high:.{digits}f})"

        print(
            f"The floor under every page: worker CPU ms per request, median (min–max) of {ROUNDS} "
            f"interleaved rounds of {CALLS} requests, production settings"
        )
        print(f"  {'':<36} {'CPU ms':>22} {'bare ÷ this':>22}")
        for label, values in runs.items():
            print(f"  {label:<36} {spread(values, 3):>22} {spread(ratios[label], 2):>22}")
    finally:
        drop_database(database)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], json.loads(sys.argv[3]), sys.argv[4])
    else:
        main()
