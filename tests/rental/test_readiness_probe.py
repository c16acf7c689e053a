"""The SSH readiness probe against a real OpenSSH server and against broken endpoints.

No database: plain pytest functions on loopback sockets (fixtures in tests/ssh_fixtures.py).
"""

import pickle

import pytest

from rental.readiness import (
    KINDS,
    Endpoint,
    ProbeFailure,
    backoff_seconds,
    probe_all,
    probe_ssh_banner,
)


def probe_failure(host: str, port: int, *, timeout: float = 5) -> ProbeFailure:
    with pytest.raises(ProbeFailure) as info:
        probe_ssh_banner(host, port, timeout=timeout)
    return info.value


def test_real_openssh_server_answers_with_its_version_line(sshd):
    banner = probe_ssh_banner(sshd.host, sshd.port, timeout=5)

    assert banner.startswith("SSH-2.0-OpenSSH")
    assert banner == sshd.banner
    assert not banner.endswith(("\r", "\n"))


def test_real_openssh_server_answers_repeated_probes(sshd):
    """The probe sends nothing and closes: sshd keeps answering the next ones."""
    banners = {probe_ssh_banner(sshd.host, sshd.port, timeout=5) for _ in range(5)}

    assert banners == {sshd.banner}


def test_closed_port_is_refused(closed_port):
    failure = probe_failure("127.0.0.1", closed_port, timeout=5)

    assert failure.kind == "refused"
    assert failure.detail
    assert str(failure).startswith(f"127.0.0.1:{closed_port}: ")
    assert "refused" in str(failure)


def test_silent_port_times_out(silent_port):
    failure = probe_failure("127.0.0.1", silent_port, timeout=0.5)

    assert failure.kind == "timeout"
    assert str(failure) == f"127.0.0.1:{silent_port}: no SSH banner within 0.5 s"


def test_http_server_is_not_ssh(not_ssh_port):
    failure = probe_failure("127.0.0.1", not_ssh_port)

    assert failure.kind == "not_ssh"
    assert "HTTP/1.1 400" in failure.detail


def test_lines_before_the_version_line_are_accepted(scripted_port):
    port = scripted_port(b"Welcome to host 7\r\nAuthorised use only\r\nSSH-2.0-x\r\n", close=False)

    assert probe_ssh_banner("127.0.0.1", port, timeout=5) == "SSH-2.0-x"


def test_version_line_with_bare_lf_and_comment_is_accepted(scripted_port):
    port = scripted_port(b"SSH-2.0-dropbear_2022.83 some comment\n", close=False)

    assert probe_ssh_banner("127.0.0.1", port, timeout=5) == "SSH-2.0-dropbear_2022.83 some comment"


def test_ssh_1_99_is_accepted(scripted_port):
    port = scripted_port(b"SSH-1.99-OpenSSH_3.9\r\n", close=False)

    assert probe_ssh_banner("127.0.0.1", port, timeout=5) == "SSH-1.99-OpenSSH_3.9"


def test_ssh_1_only_server_is_not_ssh(scripted_port):
    port = scripted_port(b"SSH-1.5-ancient\r\n", close=False)

    failure = probe_failure("127.0.0.1", port)

    assert failure.kind == "not_ssh"
    assert "SSH-1.5" in failure.detail


def test_twenty_junk_lines_are_not_ssh_without_waiting_for_the_timeout(scripted_port):
    """The connection stays open: the probe gives up after 16 lines, not on the deadline."""
    junk = b"".join(b"junk line %d\r\n" % n for n in range(20)) + b"SSH-2.0-too-late\r\n"
    port = scripted_port(junk, close=False)

    failure = probe_failure("127.0.0.1", port, timeout=30)

    assert failure.kind == "not_ssh"


def test_endless_line_is_not_ssh(scripted_port):
    port = scripted_port(b"x" * 9000, close=False)

    failure = probe_failure("127.0.0.1", port, timeout=30)

    assert failure.kind == "not_ssh"


def test_peer_closing_before_any_data_is_closed(scripted_port):
    port = scripted_port(b"")

    failure = probe_failure("127.0.0.1", port)

    assert failure.kind == "closed"


def test_junk_then_silence_times_out(scripted_port):
    port = scripted_port(b"Welcome\r\n", close=False)

    failure = probe_failure("127.0.0.1", port, timeout=0.5)

    assert failure.kind == "timeout"


def test_name_that_does_not_resolve_is_unreachable():
    failure = probe_failure("nonexistent.invalid", 22)

    assert failure.kind == "unreachable"
    assert str(failure).startswith("nonexistent.invalid:22: ")


def test_timeout_must_be_positive():
    with pytest.raises(ValueError):
        probe_ssh_banner("127.0.0.1", 22, timeout=0)


def test_probe_failure_pickles_and_checks_its_kind():
    failure = ProbeFailure("timeout", "timed out", "::1", 22, "no SSH banner within 5.0 s")

    copy = pickle.loads(pickle.dumps(failure))

    assert (copy.kind, copy.detail, copy.host, copy.port) == ("timeout", "timed out", "::1", 22)
    assert str(copy) == "[::1]:22: no SSH banner within 5.0 s"
    assert set(KINDS) == {"refused", "timeout", "not_ssh", "unreachable", "closed"}
    with pytest.raises(ValueError):
        ProbeFailure("other", "", "h", 1, "")


def test_probe_all_keeps_the_order_and_mixes_results(sshd, closed_port, silent_port, not_ssh_port):
    endpoints = [
        Endpoint("127.0.0.1", closed_port, "closed"),
        Endpoint(sshd.host, sshd.port, "real"),
        Endpoint("127.0.0.1", silent_port, "silent"),
        Endpoint("127.0.0.1", not_ssh_port, "web"),
        Endpoint(sshd.host, sshd.port),
    ]

    results = probe_all(endpoints, timeout=0.5)

    assert [endpoint for endpoint, _result in results] == endpoints
    outcomes = [result if isinstance(result, str) else result.kind for _endpoint, result in results]
    assert outcomes == ["refused", sshd.banner, "timeout", "not_ssh", sshd.banner]


def test_probe_all_of_nothing():
    assert probe_all([], timeout=1) == []


def test_endpoint_is_a_frozen_value():
    endpoint = Endpoint("10.0.0.7", 22, "gpu-host-7")

    assert endpoint == Endpoint("10.0.0.7", 22, "gpu-host-7")
    assert Endpoint("10.0.0.7", 22).label == ""
    assert str(endpoint) == "gpu-host-7 (10.0.0.7:22)"
    with pytest.raises(AttributeError):
        endpoint.port = 2222


def test_backoff_doubles_up_to_the_cap():
    assert [backoff_seconds(n) for n in range(1, 9)] == [5, 10, 20, 40, 80, 160, 300, 300]
    assert backoff_seconds(1, base=1, cap=10) == 1
    assert backoff_seconds(4, base=1, cap=10) == 8
    assert backoff_seconds(5, base=1, cap=10) == 10
    assert backoff_seconds(10_000) == 300
    assert isinstance(backoff_seconds(1), float)


def test_backoff_counts_attempts_from_one():
    with pytest.raises(ValueError):
        backoff_seconds(0)
