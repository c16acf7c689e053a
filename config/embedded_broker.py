"""The Celery broker of the embedded default (`make run` without REDIS_URL): kombu's SQLAlchemy
transport on a SQLite file under var/, made safe for several processes on one file.

kombu's filesystem transport, used before, let the worker read a message file that a producer
had created but not yet written, and the worker died with `JSONDecodeError` (celery/kombu#1551).
Here a message is one row, inserted in one transaction and taken in another (`BEGIN IMMEDIATE`,
so two consumers never take the same row): a reader sees a message whole or not at all, however
many processes write at once. What this module changes in kombu's transport:

- every connection uses the WAL journal and waits up to BUSY_TIMEOUT_SECONDS for another
  writer, instead of failing with "database is locked" after 5 s;
- a forked process (the worker's pool) opens connections of its own: a SQLite connection must
  not be used on both sides of a fork;
- the first processes to start on a new file may create its tables and a queue's row at the
  same moment: the one that loses reads what the other created;
- a message taken is deleted (kombu marks it invisible and keeps it, so the file grew by every
  task ever sent; nothing reads an invisible row, and a worker restores the messages it has not
  acknowledged from its own memory when it stops);
- the worker looks for messages every POLLING_INTERVAL_SECONDS (kombu's 1 s, with a prefetch
  of two, capped the worker at two tasks a second).
- a wait for messages lasts at most DRAIN_WAIT_SECONDS, so that a stopping worker notices it
  at once (the worker's loop asks for 2 s, and its warm shutdown outlasted honcho's 5 s).

Not supported, as with kombu's transport: fanout exchanges, hence Celery's remote control
(`celery inspect`), mingle and gossip, which the worker leaves out by itself; the messages a
worker's main process held when it was killed outright (SIGKILL) are lost. Production uses Redis.
"""

import os
from json import loads
from queue import Empty

from kombu.transport import sqlalchemy as kombu_sqlalchemy
from kombu.utils.encoding import bytes_to_str
from sqlalchemy import create_engine, event, text
from sqlalchemy.exc import IntegrityError, OperationalError

BUSY_TIMEOUT_SECONDS = 30
POLLING_INTERVAL_SECONDS = 0.1
DRAIN_WAIT_SECONDS = 0.25


def broker_url(path: os.PathLike) -> str:
    """The broker URL of the SQLite file at `path` (used with `Transport` below)."""
    return f"sqlite:///{os.fspath(path)}"


def _on_connect(dbapi_connection, _connection_record) -> None:
    cursor = dbapi_connection.cursor()
    try:
        # WAL: readers never wait for the writer; NORMAL: no fsync per commit (a power cut may
        # lose the last messages, an application crash never does).
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
    finally:
        cursor.close()


def _create_tables(engine) -> None:
    """Create kombu's tables unless they exist; another process may be creating them now."""
    for attempt in range(3):
        try:
            kombu_sqlalchemy.metadata.create_all(engine)
            return
        except OperationalError as error:
            if "already exists" not in str(error) or attempt == 2:
                raise


def _engines_after_fork() -> None:
    # The child keeps the parent's engines but must not touch the parent's connections: new
    # pools, the inherited connections left to the parent (SQLAlchemy's recipe for fork).
    for engine, _session_factory in Channel._engines.values():
        engine.dispose(close=False)


class Channel(kombu_sqlalchemy.Channel):
    _engines = {}  # of this transport's own, keyed by URL (kombu's class keeps its own)

    def _engine_from_config(self):
        engine = create_engine(
            self.connection.client.hostname,
            # One connection is used by one thread at a time (the pool hands it out).
            connect_args={"timeout": BUSY_TIMEOUT_SECONDS, "check_same_thread": False},
        )
        event.listen(engine, "connect", _on_connect)
        _create_tables(engine)
        return engine

    def _get_or_create(self, queue):
        try:
            return super()._get_or_create(queue)
        except IntegrityError:  # another process created the queue's row meanwhile
            self.session.rollback()
            return super()._get_or_create(queue)

    def _get(self, queue):
        queue_row = self._get_or_create(queue)
        model = self.message_cls
        self.session.execute(text("BEGIN IMMEDIATE TRANSACTION"))  # the write lock, first
        try:
            message = (
                self.session.query(model)
                .filter(model.queue_id == queue_row.id, model.visible.is_(True))
                .order_by(model.id)
                .limit(1)
                .first()
            )
            payload = None
            if message is not None:
                payload = message.payload
                self.session.delete(message)
            self.session.commit()
        except BaseException:
            self.session.rollback()  # the message stays in the queue
            raise
        if payload is None:
            raise Empty()
        return loads(bytes_to_str(payload))


class Transport(kombu_sqlalchemy.Transport):
    Channel = Channel
    polling_interval = POLLING_INTERVAL_SECONDS

    def drain_events(self, connection, timeout=None):
        """Waits at most DRAIN_WAIT_SECONDS: the worker's loop asks for 2 s and looks for a
        stop request only in between, which made its warm shutdown outlast the 5 s honcho
        (`make run`) gives before SIGKILL, losing the messages it held."""
        if timeout is not None:
            timeout = min(timeout, DRAIN_WAIT_SECONDS)
        return super().drain_events(connection, timeout=timeout)


os.register_at_fork(after_in_child=_engines_after_fork)
