"""The local hosts are real: OpenSSH logs in real Unix accounts with their keys, sudo works for
the admin, the nvidia-smi stand-in shows a card only to whoever owns its device file, and the
cleanup leaves no account behind (tests/host_fixtures.py, rental/hosts/localhost.py)."""

import importlib.util
import os
import secrets
import subprocess
import time
from pathlib import Path

import pytest

from rental.hosts.localhost import (
    create_account,
    create_local_host,
    ensure_admin,
    generate_key,
    install_authorized_key,
    remove_accounts,
    sudoers_file,
)

DIAGNOSE = Path(__file__).resolve().parents[3] / "pilot/kit/diagnostics/files/diagnose.py"


def run(argv, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=20, **kwargs)


def as_user(user: str, *argv: str) -> subprocess.CompletedProcess:
    return run(["runuser", "-u", user, "--", *argv])


def account_exists(name: str) -> bool:
    return run(["getent", "passwd", name]).returncode == 0


@pytest.fixture
def tenant(host_account_prefix):
    """A fresh unprivileged account with the session's prefix (removed with the session's)."""
    return create_account(f"{host_account_prefix}t{secrets.token_hex(3)}").pw_name


def test_the_admin_logs_in_with_its_key_and_has_passwordless_sudo(
    local_host, host_admin, ssh_as, settings
):
    host = local_host(cards=2)
    assert str(host_admin.private_key_path) == settings.HOSTS_ADMIN_KEY_FILE
    assert oct(host_admin.private_key_path.stat().st_mode & 0o777) == "0o600"

    done = ssh_as(
        host,
        host_admin.user,
        host_admin.private_key_path,
        "id -un; echo PATH=$PATH; sudo -n true && echo sudo-ok; sudo -n id -u; "
        "nvidia-smi -L; echo tool-exit=$?; "
        f"sudo -n {host.gpu_tool} --query-gpu=index,uuid --format=csv,noheader",
    )

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == host_admin.user
    assert lines[1] == f"PATH={host.root}/bin:/usr/local/bin:/usr/bin:/bin"  # sshd's SetEnv
    assert lines[2:4] == ["sudo-ok", "0"]
    # The admin itself owns no device file: like any unprivileged account, it sees no card.
    assert lines[4:6] == ["No devices were found", "tool-exit=6"]
    assert lines[6:] == [f"{card['index']}, {card['uuid']}" for card in host.cards]


def test_an_account_without_the_key_and_a_wrong_key_are_refused(
    local_host, host_admin, host_account_prefix, ssh_as, tmp_path
):
    host = local_host(cards=1)
    keyless = create_account(f"{host_account_prefix}nokey").pw_name

    refused = ssh_as(host, keyless, host_admin.private_key_path, "true")
    assert refused.returncode == 255
    assert "Permission denied (publickey)" in refused.stderr

    generate_key(tmp_path / "stranger")
    wrong_key = ssh_as(host, host_admin.user, tmp_path / "stranger", "true")
    assert wrong_key.returncode == 255
    assert "Permission denied (publickey)" in wrong_key.stderr

    # Only the session's accounts may log in at all (AllowUsers prefix*), never root.
    install_authorized_key(keyless, (tmp_path / "stranger.pub").read_text())
    assert ssh_as(host, keyless, tmp_path / "stranger", "true").returncode == 0
    assert ssh_as(host, "root", host_admin.private_key_path, "true").returncode == 255


def test_a_card_is_visible_only_to_the_owner_of_its_device_file(
    local_host, tenant, ssh_as, tmp_path
):
    host = local_host(cards=2)
    tool = host.gpu_tool
    card = host.cards[1]

    nothing = as_user(tenant, tool, "--query-gpu=index,uuid", "--format=csv,noheader")
    assert (nothing.returncode, nothing.stdout) == (6, "No devices were found\n")
    assert oct(host.device_path(1).stat().st_mode & 0o777) == "0o600"

    os.chown(host.device_path(1), *_ids(tenant))
    query = "--query-gpu=index,uuid,name,memory.total"
    seen = as_user(tenant, tool, query, "--format=csv,noheader,nounits")
    assert seen.returncode == 0, seen.stdout
    assert seen.stdout == f"1, {card['uuid']}, NVIDIA H100 80GB HBM3, 81559\n"

    # Over SSH as the tenant, with the stand-in found on the session's PATH.
    generate_key(tmp_path / "tenant")
    install_authorized_key(tenant, (tmp_path / "tenant.pub").read_text())
    done = ssh_as(host, tenant, tmp_path / "tenant", "nvidia-smi -L")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"GPU 1: NVIDIA H100 80GB HBM3 (UUID: {card['uuid']})\n"

    os.chown(host.device_path(1), 0, 0)  # taken back: nothing again
    assert as_user(tenant, tool, "-L").returncode == 6


def _ids(user: str) -> tuple[int, int]:
    import pwd

    account = pwd.getpwnam(user)
    return account.pw_uid, account.pw_gid


def test_only_root_may_reset_a_card(local_host, tenant, host_admin, ssh_as):
    host = local_host(cards=2)
    os.chown(host.device_path(0), *_ids(tenant))

    refused = as_user(tenant, host.gpu_tool, "-r", "-i", "0")
    assert (refused.returncode, refused.stdout.strip()) == (4, "Insufficient Permissions")
    assert not host.resets_log.exists()

    done = ssh_as(
        host, host_admin.user, host_admin.private_key_path, f"sudo -n {host.gpu_tool} -r -i 0"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "was successfully reset." in done.stdout
    assert [line.split()[0] for line in host.resets_log.read_text().splitlines()] == ["0"]


def test_the_standin_answers_like_nvidia_smi(local_host):
    host = local_host(cards=2, model_name="NVIDIA H200", memory_mib=143771)
    tool = host.gpu_tool
    uuids = [card["uuid"] for card in host.cards]

    def out(*args: str) -> str:
        done = run([tool, *args])
        assert done.returncode == 0, done.stdout
        return done.stdout

    assert out("--query-gpu=memory.total,index", "--format=csv").splitlines() == [
        "memory.total [MiB], index",
        "143771 MiB, 0",
        "143771 MiB, 1",
    ]
    assert out("--query-gpu=name,memory.total", "--format=csv,noheader", "-i", "1") == (
        "NVIDIA H200, 143771 MiB\n"
    )
    assert out("-L").splitlines() == [f"GPU {i}: NVIDIA H200 (UUID: {uuids[i]})" for i in (0, 1)]
    assert out("--query-compute-apps=pid,gpu_uuid", "--format=csv,noheader") == ""
    table = out()
    assert "NVIDIA-SMI" in table and table.count("NVIDIA H200") == 2
    assert "No running processes found" in table
    bad = run([tool, "--query-gpu=index,bogus", "--format=csv"])
    assert (bad.returncode, bad.stdout) == (2, 'Field "bogus" is not a valid field to query.\n')
    assert run([tool, "-L", "-i", "7"]).returncode == 6


def test_diagnose_py_reads_the_standin(local_host, monkeypatch):
    host = local_host(cards=2)
    spec = importlib.util.spec_from_file_location("gr_diagnose_standin", DIAGNOSE)
    diagnose = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(diagnose)
    monkeypatch.setenv("PATH", f"{host.root}/bin:/usr/bin:/bin")

    assert diagnose.find_vendor_tools("cuda")[0] == ("nvidia-smi", host.gpu_tool, "cuda")
    found = diagnose.read_nvidia(host.gpu_tool)
    assert found["driver"] == "550.54.15"
    assert found["cards"] == [
        {"index": i, "name": "NVIDIA H100 80GB HBM3", "memory_mib": 81559.0, "arch": "sm_90"}
        for i in (0, 1)
    ]
    assert diagnose.sample_used_mib("nvidia-smi", host.gpu_tool) == {0: 0.0, 1: 0.0}


def test_a_stopped_host_is_unreachable_and_comes_back_with_its_key(local_host, host_admin, ssh_as):
    host = local_host(cards=1)
    login = (host_admin.user, host_admin.private_key_path)
    session = subprocess.Popen(  # an open session, ended by stop()
        ["ssh", "-p", str(host.port), "-i", str(login[1]), "-o", "BatchMode=yes",
         "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
         f"{login[0]}@127.0.0.1", "sleep 60"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while run(["pgrep", "-u", login[0], "-x", "sleep"]).returncode != 0:
        assert time.monotonic() < deadline, "the session did not start"
        time.sleep(0.05)

    host.stop()
    assert session.wait(timeout=10) == 255
    down = ssh_as(host, *login, "true")
    assert down.returncode == 255 and "Connection refused" in down.stderr

    port = host.port
    host.start()
    assert host.port == port
    assert ssh_as(host, *login, "true").returncode == 0

    old = host.known_hosts_line
    new_key = host.replace_host_key()
    assert host.port == port and host.known_hosts_line != old
    assert host.known_hosts_line == f"[127.0.0.1]:{port} {new_key}"
    changed = ssh_as(host, *login, "true", known_hosts_line=old)
    assert changed.returncode == 255 and "Host key verification failed" in changed.stderr
    assert ssh_as(host, *login, "true").returncode == 0


def test_remove_accounts_leaves_nothing_behind(host_account_prefix, tmp_path):
    prefix = f"{host_account_prefix}rm-"
    admin = ensure_admin(prefix, tmp_path)
    assert ensure_admin(prefix, tmp_path) == admin  # idempotent
    assert run(["visudo", "-cf", str(sudoers_file(admin.user))]).returncode == 0
    assert oct(sudoers_file(admin.user).stat().st_mode & 0o777) == "0o440"
    tenant = create_account(f"{prefix}tenant")
    sleeper = subprocess.Popen(
        ["runuser", "-u", tenant.pw_name, "--", "sleep", "300"], start_new_session=True
    )
    left = [Path("/tmp", f"{tenant.pw_name}-file"), Path("/dev/shm", f"{tenant.pw_name}-shm")]
    for path in left:
        as_user(tenant.pw_name, "touch", str(path))
        assert path.exists()

    removed = remove_accounts(prefix)

    assert sorted(removed) == sorted([admin.user, tenant.pw_name])
    assert sleeper.wait(timeout=10) != 0
    for name in removed:
        assert not account_exists(name)
        assert not sudoers_file(name).exists()
    assert not any(path.exists() for path in left)
    assert not Path(tenant.pw_dir).exists()
    assert remove_accounts(prefix) == []  # nothing there: fine
    for too_short in ("", "gr", "g"):
        with pytest.raises(ValueError):
            remove_accounts(too_short)


def test_a_root_that_tenants_could_not_reach_is_refused(host_account_prefix, tmp_path):
    with pytest.raises(ValueError, match="not traversable"):
        create_local_host(tmp_path / "host", prefix=host_account_prefix, cards=[])
