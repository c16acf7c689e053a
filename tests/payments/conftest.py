import pytest
from django.db import connection


@pytest.fixture(autouse=True)
def _ledger_checked_as_at_commit(request):
    """Tests inside one rolled-back transaction never commit, so the database's deferred
    ledger checks would never run: fire them at the end of every test as a commit would."""
    marker = request.node.get_closest_marker("django_db")
    if marker is None and not {"db", "transactional_db"} & set(request.fixturenames):
        yield  # no database in this test
        return
    commits = (marker is not None and marker.kwargs.get("transaction")) or {
        "transactional_db",
        "live_server",
    } & set(request.fixturenames)
    if commits:
        yield  # those tests really commit: the database checks them there
        return
    request.getfixturevalue("db")  # so that this teardown runs while the database is open
    yield
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
