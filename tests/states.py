"""States reached the way operators and workers reach them: through the setters and services,
never by writing a status on a row, so every state a test sees is one the house can reach."""

from rental.hosts.services import host_set_state
from rental.models import Host


def hosts_set_state(hosts, to_state: str, reason: str = "Set by an operator (test)") -> None:
    """Move each host (a queryset or a list) through the one host setter, in pk order; a
    transition outside HOST_TRANSITIONS raises."""
    ids = sorted(host.pk if isinstance(host, Host) else host for host in hosts)
    for host_id in ids:
        host_set_state(host_id=host_id, to_state=to_state, actor=None, reason=reason)
