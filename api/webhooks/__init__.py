"""Signed webhooks: endpoints per account, the fan-out of outbox events to them, delivery with
backoff, the delivery log, manual redelivery, and the address guard. A Django app of its own
(label "webhooks"), so its migrations are its own."""
