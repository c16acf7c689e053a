"""Every write of webhooks: endpoints (`endpoints`), the fan-out of outbox events
(`fanout`), delivery and its schedule (`delivery`), the minute sweep (`sweep`)."""
