"""The shipped deployment says the same thing three ways: Procfile.production (the roles as plain
processes), compose.yaml and the systemd units of deploy/systemd/ start the same commands, with a
worker for every queue of config/queues.py, one beat, the web under gunicorn.conf.py and a
migrate + collectstatic job first. No Docker daemon here: the compose file is read and checked;
the units are checked by systemd-analyze."""

import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from config.queues import QUEUES

ROOT = Path(__file__).resolve().parent.parent
UNITS = ROOT / "deploy" / "systemd"
INSTALL_DIR = "/srv/gpu-rental"
WORKER_ROLES = {f"worker-{'default' if kind == 'celery' else kind}": kind for kind in QUEUES}
ROLES = {"web", "relay", "beat", *WORKER_ROLES}


def procfile() -> dict[str, list[str]]:
    roles = {}
    for line in (ROOT / "Procfile.production").read_text().splitlines():
        name, _, command = line.partition(":")
        roles[name.strip()] = shlex.split(command)
    return roles


def compose() -> dict:
    return yaml.safe_load((ROOT / "compose.yaml").read_text())


def unit(name: str) -> str:
    return (UNITS / name).read_text()


def exec_starts(text: str) -> list[list[str]]:
    """ExecStart= lines as argv, the install directory's virtual environment left out and
    systemd's %H (the host name) written as Celery's %h."""
    commands = []
    for line in text.splitlines():
        if line.startswith("ExecStart="):
            argv = shlex.split(line.removeprefix("ExecStart=").replace("%H", "%h"))
            argv[0] = argv[0].removeprefix(f"{INSTALL_DIR}/.venv/bin/")
            commands.append(argv)
    return commands


def test_the_procfile_has_every_role_and_a_worker_per_queue():
    roles = procfile()
    assert set(roles) == ROLES
    for role, kind in WORKER_ROLES.items():
        argv = roles[role]
        assert argv[:4] == ["celery", "-A", "config.celery_app", "worker"]
        assert argv[argv.index("-Q") + 1] == kind  # one queue each
    assert "--pool=threads" in roles["worker-webhooks"]
    assert roles["web"] == ["gunicorn", "-c", "gunicorn.conf.py", "config.wsgi"]
    assert roles["beat"][:4] == ["celery", "-A", "config.celery_app", "beat"]
    assert roles["relay"] == ["python", "manage.py", "outbox_relay"]


def test_compose_runs_the_same_roles_after_migrate_with_health_checks():
    services = compose()["services"]
    assert set(services) == ROLES | {"postgres", "redis", "migrate"}
    for role, argv in procfile().items():
        service = services[role]
        assert service["command"] == argv, role
        assert service["environment"]["DJANGO_SETTINGS_MODULE"] == "config.settings.production"
        assert service["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
        assert service["depends_on"]["postgres"] == {"condition": "service_healthy"}
        assert service["depends_on"]["redis"] == {"condition": "service_healthy"}
    migrate = " ".join(services["migrate"]["command"])
    assert "manage.py migrate --noinput" in migrate
    assert "manage.py collectstatic --noinput" in migrate
    health = " ".join(services["web"]["healthcheck"]["test"])
    assert "healthz" in health and "readyz" in health
    assert services["postgres"]["healthcheck"] and services["redis"]["healthcheck"]
    assert "beat" in services and services["beat"].get("deploy", {}).get("replicas", 1) == 1


def test_the_image_starts_the_web_role_by_default():
    dockerfile = (ROOT / "Dockerfile").read_text()
    cmd = re.search(r"^CMD (\[.*\])$", dockerfile, re.MULTILINE).group(1)
    assert yaml.safe_load(cmd) == procfile()["web"]
    assert "DJANGO_SETTINGS_MODULE=config.settings.production" in dockerfile


def test_the_systemd_units_start_the_same_roles():
    roles = procfile()
    assert exec_starts(unit("gpu-rental-web.service")) == [roles["web"]]
    assert exec_starts(unit("gpu-rental-beat.service")) == [roles["beat"]]
    assert exec_starts(unit("gpu-rental-relay.service")) == [roles["relay"]]
    for role in WORKER_ROLES:
        assert exec_starts(unit(f"gpu-rental-{role}.service")) == [roles[role]], role
    migrate = exec_starts(unit("gpu-rental-migrate.service"))
    assert migrate == [
        ["python", "manage.py", "migrate", "--noinput"],
        ["python", "manage.py", "collectstatic", "--noinput"],
    ]
    target = unit("gpu-rental.target")
    for name in ["migrate", "web", "relay", "beat", *WORKER_ROLES]:
        assert f"gpu-rental-{name}.service" in target
    for path in UNITS.glob("*.service"):
        text = path.read_text()
        assert "EnvironmentFile=/etc/gpu-rental/env" in text, path.name
        if path.name != "gpu-rental-migrate.service":
            assert "Requires=gpu-rental-migrate.service" in text, path.name


def test_systemd_analyze_finds_nothing_wrong_in_the_units(tmp_path):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.fail("systemd-analyze is missing: install the distribution's systemd package")
    # Installed in this checkout instead of /srv/gpu-rental, so every command exists.
    for path in UNITS.iterdir():
        (tmp_path / path.name).write_text(path.read_text().replace(INSTALL_DIR, str(ROOT)))
    result = subprocess.run(
        [analyze, "verify", "--man=no", *sorted(str(p) for p in tmp_path.iterdir())],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == ""
