"""config/lazy_modules.py's deferred package `__init__`: the package's submodules import as
usual, its `__init__` runs on the first name asked of the package, and then the package is the
one its `__init__` makes. redis-py's package and its asyncio package are deferred so: the cache
(config/cache.py) takes its classes from their modules and leaves both unrun; asking either
for a name runs it (kombu's `redis.Redis`, an asyncio client).

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
        from deferred_pkg import part
        before = builtins.INIT_RUNS
        name = deferred_pkg.NAME
        from deferred_pkg import VALUE as again
        try:
            deferred_pkg.missing
        except AttributeError:
            missing = "AttributeError"
        print(json.dumps({
            "runs before a name": before, "submodule": VALUE, "from import": part.VALUE,
            "name": name, "again": again,
            "runs": builtins.INIT_RUNS, "missing": missing,
            "hook left": "__getattr__" in vars(deferred_pkg),
        }))
        """,
        cwd=tmp_path,
    )

    assert report == {
        "runs before a name": 0,
        "submodule": 42,
        "from import": 42,
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


def test_the_cache_loads_redis_without_its_other_clients_until_asked():
    report = run_fresh(
        """
        import json, sys
        import config  # installs the deferrals, as every process of the project does
        from config.cache import RedisCache
        cache = RedisCache("redis://127.0.0.1:1/0", {})
        client = cache._cache.get_client()
        def loaded():
            return sorted(
                name for name in sys.modules
                if name.startswith(("redis.asyncio.", "redis.cluster", "redis.sentinel"))
            )
        before = loaded()
        import redis
        from redis.asyncio import Redis
        from redis.asyncio.client import Redis as ClientRedis
        print(json.dumps({
            "client": type(client).__module__,
            "loaded before": before,
            "same class": redis.Redis is type(client)
            and Redis is ClientRedis is redis.asyncio.Redis,
            "cluster": redis.RedisCluster.__module__,
            "sentinel": redis.asyncio.Sentinel.__module__,
            "version": redis.__version__.split(".")[0],
        }))
        """
    )

    # redis.commands.core imports redis.asyncio.observability.recorder (a submodule only).
    assert report == {
        "client": "redis.client",
        "loaded before": ["redis.asyncio.observability", "redis.asyncio.observability.recorder"],
        "same class": True,
        "cluster": "redis.cluster",
        "sentinel": "redis.asyncio.sentinel",
        "version": "8",
    }
