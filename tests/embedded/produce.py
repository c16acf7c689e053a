"""One producer process for tests/embedded: publishes probe tasks through the broker the settings
choose (the embedded default when neither REDIS_URL nor CELERY_BROKER_URL is set).

    python -m tests.embedded.produce PRODUCER COUNT PADDING_BYTES MAX_PAUSE_SECONDS QUEUE

Says "ready" once connected, then waits for a line on standard input, so that every producer
starts publishing at the same moment; pauses a random time up to MAX_PAUSE_SECONDS between
messages (uneven, as web requests and beat publish); says "done TIME" after the last one."""

import random
import sys
import time


def main(argv: list[str]) -> None:
    producer, count, padding_bytes = (int(value) for value in argv[:3])
    max_pause, queue = float(argv[3]), argv[4]
    from config.celery_app import app

    padding = "x" * padding_bytes
    with app.connection_for_write() as connection:
        connection.ensure_connection(max_retries=3)
    print("ready", flush=True)
    sys.stdin.readline()
    pace = random.Random(producer)
    for sequence in range(count):
        app.send_task(
            "tests.embedded.probe.record", args=[producer, sequence, padding], queue=queue
        )
        time.sleep(pace.uniform(0, max_pause))
    print(f"done {time.time()}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
