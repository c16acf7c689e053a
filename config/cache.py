"""Django's Redis cache, keeping one redis-py client per connection pool.

Django's RedisCacheClient.get_client builds a new `redis.Redis` for every cache call
(django/core/cache/backends/redis.py): each build fills redis-py's table of response callbacks
(~170 entries), and a logged-in request pays it at least once for its session. redis-py clients
are safe to share between threads (every command takes its own connection from the pool), so
one client per pool is kept instead. bench/http_floor.py measures the difference.
"""

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient


class ReusedClientRedisCacheClient(RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
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
