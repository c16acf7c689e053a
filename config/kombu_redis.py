"""kombu's Redis transport, keeping one redis-py client per connection pool for publishing.

kombu's Channel builds a new `redis.Redis` for every message it puts (`conn_or_acquire` ->
`_create_client`, kombu/transport/redis.py): each build fills redis-py's table of response
callbacks (~170 entries), as Django's cache did before config/cache.py. redis-py clients are
safe to share (every command takes its own connection from the pool), so each channel keeps
one for the pool it publishes through. The consumer's asynchronous client (BRPOP) is kombu's
own, unchanged. config/celery_app.py selects it for redis:// brokers; bench/watcher.py and
tests/outbox/test_publish_per_commit.py measure and show it.
"""

from kombu.transport import redis as kombu_redis


class Channel(kombu_redis.Channel):
    _publishing_client = None

    def _create_client(self, asynchronous=False):
        if asynchronous:
            return super()._create_client(asynchronous=True)
        client = self._publishing_client
        if client is None or client.connection_pool is not self.pool:
            client = super()._create_client()
            self._publishing_client = client
        return client


class Transport(kombu_redis.Transport):
    Channel = Channel
