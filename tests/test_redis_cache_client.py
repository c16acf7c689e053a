"""The Redis cache keeps one redis-py client per connection pool (config/cache.py) and still
behaves as Django's cache: values round-trip, expire and are shared by threads and by a second
cache object on the same server (another worker)."""

import threading
import time

import pytest
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache

from config.cache import RedisCache

pytestmark = pytest.mark.skipif(
    not settings.CACHES["default"]["BACKEND"].endswith("RedisCache"),
    reason="the test settings use Redis when REDIS_URL is set",
)


def test_the_configured_cache_is_ours():
    assert isinstance(caches["default"], RedisCache)


def test_one_redis_client_serves_every_call_and_values_round_trip():
    cache = caches["default"]
    cache.set("speed:a", {"lots": 3}, 30)
    first = cache._cache.get_client("speed:a")
    assert cache.get("speed:a") == {"lots": 3}
    assert cache._cache.get_client("speed:b", write=True) is first
    cache.delete("speed:a")
    assert cache.get("speed:a", "gone") == "gone"


def test_a_plain_django_cache_on_the_same_server_sees_the_same_values():
    ours = caches["default"]
    options = settings.CACHES["default"]
    plain = DjangoRedisCache(options["LOCATION"], {"KEY_PREFIX": options.get("KEY_PREFIX", "")})
    ours.set("speed:shared", "from ours", 30)
    assert plain.get("speed:shared") == "from ours"
    plain.set("speed:shared", "from plain", 30)
    assert ours.get("speed:shared") == "from plain"


def test_values_expire():
    cache = caches["default"]
    cache.set("speed:short", "x", 1)
    time.sleep(1.2)
    assert cache.get("speed:short") is None


def test_threads_share_the_client_without_mixing_answers():
    cache = caches["default"]
    errors = []

    def work(number: int) -> None:
        try:
            for step in range(200):
                key = f"speed:thread:{number}:{step}"
                cache.set(key, (number, step), 30)
                if cache.get(key) != (number, step):
                    errors.append((number, step))
        except Exception as error:  # noqa: BLE001 - collected and asserted below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(number,)) for number in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert cache.get("speed:thread:7:199") == (7, 199)


def test_the_client_is_built_as_djangos_from_redis_py_modules():
    """config/cache.py builds its client without `import redis` (its __init__ is deferred): the
    same classes, serializer and pool options as Django's RedisCacheClient for the same
    arguments."""
    from django.core.cache.backends.redis import RedisCacheClient

    from config.cache import ReusedClientRedisCacheClient

    for arguments in (
        {},
        {
            "parser_class": "redis.connection._RESP2Parser",
            "pool_class": "redis.BlockingConnectionPool",
        },
        {"serializer": "django.core.cache.backends.redis.RedisSerializer", "db": 3},
    ):
        ours = ReusedClientRedisCacheClient(["redis://127.0.0.1:1/0"], **arguments)
        djangos = RedisCacheClient(["redis://127.0.0.1:1/0"], **arguments)

        assert ours._client is djangos._client
        assert ours._pool_class is djangos._pool_class
        assert type(ours._serializer) is type(djangos._serializer)
        assert ours._pool_options == djangos._pool_options
