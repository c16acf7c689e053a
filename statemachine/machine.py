"""The state machine helper: transitions map → checked setter → audit row → effects.

An entity declares one `StateMachine` beside its setter:

    ORDER_STATES = StateMachine(
        name="order", transitions=ALLOWED_TRANSITIONS, audit_model=OrderStatusChange,
        refuse=lambda order, to_status: InvalidTransition(), logger=logger, ...
    )

and its setter is then one call, which locks the row through the app's lock module:

    ORDER_STATES.set(lock=locks.lock_order, pk=order_id, to_status=..., actor=..., reason=...)

`set` runs, in one transaction: lock the row → check the map (the entity's own error) → apply
the status and the extra fields → save with update_fields → write the audit row → the effects.
Effects run inside the transaction, after the audit row, and must defer anything that leaves
the process (an outbox row, `delay_on_commit`); the log line is written after the commit.

A setter whose caller already holds the lock calls `change` on the locked row. A batch setter
(payments sets hundreds of statuses in fixed queries) uses the parts: `check` per row,
`audit_row` (or `audit_values`, the same as plain values) per row for one bulk insert,
`log_many_on_commit` for the batch (a batch of many logs one summary line, each change at
DEBUG), and writes the statuses itself in its own statement.

An entity whose history lives elsewhere has no audit model (`audit_model=None`): a chain
transfer's changes are told by its payment's events, a webhook delivery's by its attempt log.
Its changes are checked, saved, logged and followed by their effects all the same.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Model

REASON_MAX_LENGTH = 500


@dataclass(frozen=True, slots=True)
class Transition:
    """One change just applied (inside its transaction)."""

    obj: Model
    from_status: str
    to_status: str
    actor: Any
    reason: str
    audit: Model | None = None


@dataclass(frozen=True, kw_only=True)
class StateMachine:
    """One entity's states. `refuse(obj, to_status)` builds the entity's own error;
    `describe(obj)` gives the log line's subject text and its identifying fields, e.g.
    ("order GR-000042", {"order": "GR-000042"}). `audit_model` None: no audit row (the
    entity's history is kept elsewhere, say where beside the machine)."""

    name: str
    transitions: Mapping[str, frozenset[str]]
    audit_model: type[Model] | None
    refuse: Callable[[Model, str], Exception]
    state_field: str = "status"
    # Saved with every change (auto_now fields).
    touch: tuple[str, ...] = ("updated_at",)
    logger: logging.Logger | None = None
    describe: Callable[[Model], tuple[str, dict]] | None = None
    # Run inside the transaction after the audit row (outbox emits, tasks queued on commit).
    effects: tuple[Callable[[Transition], None], ...] = field(default=())

    # ------------------------------------------------------------------ the parts

    def allows(self, from_status: str, to_status: str) -> bool:
        return to_status in self.transitions.get(from_status, frozenset())

    def check(self, obj: Model, to_status: str) -> None:
        """Raise the entity's own error unless the map lets `obj` go to `to_status`."""
        if not self.allows(getattr(obj, self.state_field), to_status):
            raise self.refuse(obj, to_status)

    def audit_row(
        self, obj: Model, *, from_status: str, to_status: str, actor, reason: str, **extra
    ) -> Model:
        """The audit row of one change, not saved (a batch setter inserts many at once);
        `extra` fills the audit model's own fields (a payment event's kind and data)."""
        if self.audit_model is None:
            raise TypeError(f"{self.name} has no audit model")
        return self.audit_model(
            **{self.audit_model.subject_field: obj},
            from_status=from_status,
            to_status=to_status,
            actor=actor,
            reason=reason[:REASON_MAX_LENGTH],
            **extra,
        )

    def audit_values(
        self, obj: Model, *, from_status: str, to_status: str, actor, reason: str, **extra
    ) -> dict[str, Any]:
        """The same audit row as plain values by field name (the subject and the actor as
        their ids), for a batch setter that inserts many as rows without a model instance
        each (payments.bulk.insert_rows); the caller adds the creation time."""
        if self.audit_model is None:
            raise TypeError(f"{self.name} has no audit model")
        return {
            self.audit_model.subject_field: obj.pk,
            "from_status": from_status,
            "to_status": to_status,
            "actor": actor.pk if actor is not None else None,
            "reason": reason[:REASON_MAX_LENGTH],
            **extra,
        }

    def log_on_commit(self, obj: Model, *, from_status: str, to_status: str, actor, reason: str):
        """One log line per change, once it is committed (none if it rolls back)."""
        if self.logger is None:
            return
        line = self._line(obj, from_status, to_status, actor, reason)
        transaction.on_commit(lambda: self._emit(logging.INFO, *line))

    def log_many_on_commit(self, changes: Sequence[tuple[Model, str, str, Any, str]]) -> None:
        """A batch setter's log, once committed: each change's own line when there is one;
        for many, ONE summary line (how many went from what to what) and each change at DEBUG.
        `changes`: (obj, from_status, to_status, actor, reason). Seen before: 500 lines for one
        settlement of 500 confirmations."""
        if self.logger is None or not changes:
            return
        if len(changes) == 1:
            (obj, from_status, to_status, actor, reason) = changes[0]
            self.log_on_commit(
                obj, from_status=from_status, to_status=to_status, actor=actor, reason=reason
            )
            return
        logger = self.logger
        if logger.isEnabledFor(logging.DEBUG):
            lines = [self._line(*change) for change in changes]
        else:
            lines = []
        counts = Counter(
            (from_status or "(new)", to_status) for _, from_status, to_status, _, _ in changes
        )
        summary = ", ".join(f"{n} {a} -> {b}" for (a, b), n in sorted(counts.items()))
        extra = {
            "event": f"{self.name}_status_batch",
            "changes": len(changes),
            "transitions": {f"{a} -> {b}": n for (a, b), n in sorted(counts.items())},
        }

        def emit():
            for line in lines:
                self._emit(logging.DEBUG, *line)
            logger.info("%s batch of %d changes: %s", self.name, len(changes), summary, extra=extra)

        transaction.on_commit(emit)

    def _line(self, obj: Model, from_status: str, to_status: str, actor, reason: str):
        subject, identity = self.describe(obj) if self.describe else (f"{self.name} {obj.pk}", {})
        extra = {
            "event": f"{self.name}_status",
            **identity,
            "from_status": from_status,
            "to_status": to_status,
            "actor_id": actor.pk if actor else None,
            "reason": reason,
        }
        return subject, from_status, to_status, reason, extra

    def _emit(self, level: int, subject, from_status, to_status, reason, extra) -> None:
        self.logger.log(
            level,
            "%s %s -> %s: %s",
            subject,
            from_status or "(new)",
            to_status,
            reason or "-",
            extra=extra,
        )

    def record(
        self, obj: Model, *, from_status: str, to_status: str, actor, reason: str, **extra
    ) -> Transition:
        """Write the audit row (none without an audit model) and schedule the log line of a
        change already saved (also the creation of a row: `from_status` ""); no effects."""
        audit = None
        if self.audit_model is not None:
            audit = self.audit_row(
                obj,
                from_status=from_status,
                to_status=to_status,
                actor=actor,
                reason=reason,
                **extra,
            )
            audit.save(force_insert=True)
        self.log_on_commit(
            obj, from_status=from_status, to_status=to_status, actor=actor, reason=reason
        )
        return Transition(obj, from_status, to_status, actor, reason, audit)

    # ------------------------------------------------------------------ the setter

    def change(
        self,
        obj: Model,
        *,
        to_status: str,
        actor,
        reason: str,
        fields: Mapping[str, Any] = {},
        audit: Mapping[str, Any] = {},
    ) -> Transition:
        """Change a row the caller holds locked: check, apply the status and `fields`, save
        them, audit (`audit`: the audit model's own fields), run the effects."""
        self.check(obj, to_status)
        from_status = getattr(obj, self.state_field)
        setattr(obj, self.state_field, to_status)
        for name, value in fields.items():
            setattr(obj, name, value)
        obj.save(update_fields=_unique([self.state_field, *self.touch, *fields]))
        done = self.record(
            obj, from_status=from_status, to_status=to_status, actor=actor, reason=reason, **audit
        )
        for effect in self.effects:
            effect(done)
        return done

    def set(
        self,
        *,
        lock: Callable[[int], Model],
        pk: int,
        to_status: str,
        actor,
        reason: str,
        fields: Mapping[str, Any] = {},
        unchanged_ok: bool = False,
    ) -> Model:
        """The checked setter: lock the row (`lock(pk)`, from the app's lock module) and
        `change` it, in one transaction. With `unchanged_ok`, asking for the status it
        already has returns the row and writes nothing."""
        with transaction.atomic():
            obj = lock(pk)
            if unchanged_ok and getattr(obj, self.state_field) == to_status:
                return obj
            self.change(obj, to_status=to_status, actor=actor, reason=reason, fields=fields)
        return obj


def _unique(names: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(names))
