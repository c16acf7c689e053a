"""config/lazy_modules.py's deferred package `__init__`: the package's submodules import as
usual, its `__init__` runs on the first name asked of the package, and then the package is the
one its `__init__` makes. redis-py's asyncio package is deferred so: `import redis` and the
synchronous client (the cache) leave it unrun; asking it for its client runs it.

Each case runs in a fresh interpreter: deferring has to happen before the first import."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_fresh(script: str, *, cwd: Path = ROOT) -> dict:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=cwd,
        env={"PYTHONPATH": f"{ROOT}:{cwd}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_init_runs_on_the_first_name_asked_and_not_for_a_submodule(tmp_path):
    package = tmp_path / "deferred_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import builtins\nbuiltins.INIT_RUNS += 1\nfrom deferred_pkg.part import VALUE\n"
        "NAME = 'from init'\n"
    )
    (package / "part.py").write_text("VALUE = 42\n")
    report = run_fresh(
        """
        import builtins, json, sys
        builtins.INIT_RUNS = 0
        from config.lazy_modules import defer_package_init
        defer_package_init(["deferred_pkg"])
        import deferred_pkg
        from deferred_pkg.part import VALUE
        before = builtins.INIT_RUNS
        name = deferred_pkg.NAME
        from deferred_pkg import VALUE as again
        try:
            deferred_pkg.missing
        except AttributeError:
            missing = "AttributeError"
        print(json.dumps({
            "runs before a name": before, "submodule": VALUE, "name": name, "again": again,
            "runs": builtins.INIT_RUNS, "missing": missing,
            "hook left": "__getattr__" in vars(deferred_pkg),
        }))
        """,
        cwd=tmp_path,
    )

    assert report == {
        "runs before a name": 0,
        "submodule": 42,
        "name": "from init",
        "again": 42,
        "runs": 1,
        "missing": "AttributeError",
        "hook left": False,
    }


def test_an_init_that_fails_fails_again_when_asked_again(tmp_path):
    package = tmp_path / "failing_pkg"
    package.mkdir()
    (package / "__init__.py").write_text(
        "import builtins\nbuiltins.INIT_RUNS += 1\nraise ImportError('not today')\n"
    )
    report = run_fresh(
        """
        import builtins, json
        builtins.INIT_RUNS = 0
        from config.lazy_modules import defer_package_init
        defer_package_init(["failing_pkg"])
        import failing_pkg
        errors = []
        for _ in range(2):
            try:
                failing_pkg.anything
            except ImportError as error:
                errors.append(str(error))
        print(json.dumps({"errors": errors, "runs": builtins.INIT_RUNS}))
        """,
        cwd=tmp_path,
    )

    assert report == {"errors": ["not today", "not today"], "runs": 2}


def test_redis_loads_without_its_asyncio_client_until_asked():
    report = run_fresh(
        """
        import json, sys
        import config  # installs the deferrals, as every process of the project does
        import redis
        from redis.connection import ConnectionPool
        client = redis.Redis(connection_pool=ConnectionPool.from_url("redis://127.0.0.1:1/0"))
        loaded = sorted(name for name in sys.modules if name.startswith("redis.asyncio."))
        from redis.asyncio import Redis
        from redis.asyncio.client import Redis as ClientRedis
        print(json.dumps({
            "asyncio modules before": loaded,
            "same class": Redis is ClientRedis is redis.asyncio.Redis,
            "sentinel": redis.asyncio.Sentinel.__module__,
        }))
        """
    )

    # redis.commands.core imports redis.asyncio.observability.recorder (a submodule only).
    assert report == {
        "asyncio modules before": [
            "redis.asyncio.observability",
            "redis.asyncio.observability.recorder",
        ],
        "same class": True,
        "sentinel": "redis.asyncio.sentinel",
    }
