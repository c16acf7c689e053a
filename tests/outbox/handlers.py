"""An outbox handler for tests: it breaks on `payment.review` events, as a bug would."""


def break_on_review(event) -> None:
    if event.event_type == "payment.review":
        raise RuntimeError(f"handler broke on {event.event_id}")
