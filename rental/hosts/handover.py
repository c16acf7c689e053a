"""The diagnostics kit's check, run by the worker as the tenant at verification.

The kit and its reports belong to the pilot app, which sits above rental: rental never imports
it. The pilot registers, when it is ready (pilot.apps), what the worker needs: the kit for an
order (diagnose.py and its order.json) and where its report goes (stored like a customer's
report, compared with the order; a difference puts the active order in front of an operator).
Without a pilot app the worker's own reading of the cards is the only check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Kit:
    script: Path  # diagnose.py
    order_document: dict  # its order.json


_kit_for: Callable[..., Kit | None] | None = None
_receive: Callable[..., None] | None = None


def register(*, kit_for: Callable[..., Kit | None], receive: Callable[..., None]) -> None:
    """kit_for(order) -> Kit or None; receive(order_id=..., host_name=..., raw=bytes)."""
    global _kit_for, _receive
    _kit_for, _receive = kit_for, receive


def kit_for(order) -> Kit | None:
    return _kit_for(order) if _kit_for else None


def receive(*, order_id: int, host_name: str, raw: bytes) -> None:
    if _receive:
        _receive(order_id=order_id, host_name=host_name, raw=raw)
