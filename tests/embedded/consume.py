"""A consumer process for tests/embedded that reads as fast as the broker lets it: kombu's own
consumer on the connection the settings choose (transport and options as the worker gets them),
polling every 5 ms instead of the worker's interval, so that it is often reading while the
producers write.

    python -m tests.embedded.consume QUEUE EXPECTED SECONDS

Reads until it has EXPECTED messages or SECONDS have passed, then prints one JSON line:
{"read": [[producer, sequence, time read], ...], "unreadable": ["error", ...]}. A message the
transport cannot decode is counted as unreadable (it is gone from the queue all the same)."""

import json
import sys
import time
from queue import Empty


def main(argv: list[str]) -> None:
    queue_name, expected, seconds = argv[0], int(argv[1]), float(argv[2])
    from config.celery_app import app

    read, unreadable = [], []
    connection = app.connection_for_read(
        transport_options={**app.conf.broker_transport_options, "polling_interval": 0.005}
    )
    with connection, connection.SimpleQueue(queue_name) as queue:
        print("ready", flush=True)
        deadline = time.monotonic() + seconds
        while len(read) + len(unreadable) < expected and time.monotonic() < deadline:
            try:
                message = queue.get(timeout=0.5)
            except Empty:
                continue
            except ValueError as error:  # json.JSONDecodeError: a message read half-written
                unreadable.append(f"{type(error).__name__}: {error}")
                continue
            args = message.decode()[0]  # task protocol 2: [args, kwargs, embed]
            read.append([*args[:2], time.time()])
            message.ack()
    print(json.dumps({"read": read, "unreadable": unreadable}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
