"""One shape for every state machine of the house (order, extension, host, tenancy; payments'
next): a transitions map, a checked setter, an audit row, effects after the commit.

This package sits at the very bottom of the house, below `outbox`: it imports only Django and
the standard library, so every app may import it (`api → payments, pilot → rental → accounts →
outbox → statemachine`). It is not an installed app: it holds no concrete model, only the
abstract audit-row base (`statemachine.audit.StatusChange`) that each app's own models extend.
"""

from .machine import StateMachine, Transition

__all__ = ["StateMachine", "Transition"]
