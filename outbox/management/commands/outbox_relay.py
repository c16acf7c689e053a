"""`manage.py outbox_relay`: the relay role (Procfile.production, compose.yaml, systemd).

Publishes the tasks that web processes commit, woken by PostgreSQL's NOTIFY (outbox/relay.py).
Runs until SIGTERM or SIGINT, then finishes its pass and exits 0. `--once`: one pass, then exit
(for cron or by hand: prints how many messages it published)."""

import signal

from django.core.management.base import BaseCommand

from outbox import relay
from outbox.messages import publish_pending


class Command(BaseCommand):
    help = "Publish the tasks committed by web processes to the broker (a long-running role)."

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="One pass, then exit.")

    def handle(self, *args, once: bool = False, **options):
        if once:
            import config.celery_app  # noqa: F401  (publishing needs Celery here)

            published = publish_pending()
            self.stdout.write(f"Published {len(published)} message(s).")
            return
        stopping = []

        def stop(signum, _frame):
            stopping.append(signum)

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        self.stdout.write("Outbox relay started: publishing committed tasks to the broker.")
        self.stdout.flush()
        stats = relay.run(should_stop=lambda: bool(stopping))
        self.stdout.write(
            f"Outbox relay stopped: {stats.published} message(s) published in {stats.passes} "
            f"pass(es); broker down {stats.broker_failures} time(s), database "
            f"{stats.database_failures} time(s)."
        )
