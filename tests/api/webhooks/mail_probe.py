"""An email backend for tests that looks, from another database connection, at the endpoint
rows while a message is being sent: locked or not, and whether the "owner told" mark is
already committed. `fail_next` makes the next sends fail as an SMTP server that is down."""

import threading

from django.core.mail.backends.base import BaseEmailBackend
from django.db import DatabaseError, connection, transaction

from api.webhooks.models import WebhookEndpoint


class LockProbeBackend(BaseEmailBackend):
    seen: list[dict] = []
    fail_next = 0

    def send_messages(self, messages):
        probe: dict = {"subjects": [m.subject for m in messages]}

        def look():
            try:
                with transaction.atomic():
                    rows = WebhookEndpoint.objects.select_for_update(nowait=True)
                    probe["notified"] = [r.disabled_notified_at for r in rows]
                    probe["locked"] = False
            except DatabaseError:
                probe["locked"] = True
            finally:
                connection.close()

        thread = threading.Thread(target=look)
        thread.start()
        thread.join(timeout=10)
        type(self).seen.append(probe)
        if type(self).fail_next:
            type(self).fail_next -= 1
            probe["failed"] = True
            raise OSError("the SMTP server is down")
        return len(messages)
