"""Django's Redis cache, keeping one redis-py client per connection pool.

Django's RedisCacheClient.get_client builds a new `redis.Redis` for every cache call
(django/core/cache/backends/redis.py): each build fills redis-py's table of response callbacks
(~170 entries), and a logged-in request pays it at least once for its session. redis-py clients
are safe to share between threads (every command takes its own connection from the pool), so
one client per pool is kept instead. bench/http_floor.py measures the difference.

It takes redis-py's classes from the modules that define them, not from the `redis` package,
whose `__init__` (deferred: config/__init__.py, config/lazy_modules.py) imports the cluster,
sentinel and keyspace-notification clients too, which the cache never uses (about 0.7 MB of a
web worker). Django's RedisCacheClient.__init__ does `import redis` and reads them from there.
"""

import django
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient, RedisSerializer
from django.utils.module_loading import import_string


class ReusedClientRedisCacheClient(RedisCacheClient):
    def __init__(self, servers, serializer=None, pool_class=None, parser_class=None, **options):
        # Django's own, with redis-py's classes from their modules (tests/test_redis_cache_client.py
        # checks that it builds what Django's does).
        from redis.client import Redis
        from redis.connection import ConnectionPool, DefaultParser
        from redis.driver_info import DriverInfo

        self._servers = servers
        self._pools = {}
        self._client = Redis
        if isinstance(pool_class, str):
            pool_class = import_string(pool_class)
        self._pool_class = pool_class or ConnectionPool
        if isinstance(serializer, str):
            serializer = import_string(serializer)
        if callable(serializer):
            serializer = serializer()
        self._serializer = serializer or RedisSerializer()
        if isinstance(parser_class, str):
            parser_class = import_string(parser_class)
        driver_info = DriverInfo().add_upstream_driver("django", django.get_version())
        self._pool_options = {
            "parser_class": parser_class or DefaultParser,
            "driver_info": driver_info,
            **options,
        }
        self._clients = {}

    def get_client(self, key=None, *, write=False):
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._client(connection_pool=self._get_connection_pool(write))
            self._clients[index] = client
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = ReusedClientRedisCacheClient
