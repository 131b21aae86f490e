"""SIGINT and SIGTERM stop every todosync command cleanly within 5 s with exit status 0, also in
the middle of a sync: the sync is cancelled, the store stays consistent, and the next sync converges.
(Run here, outside Swift: a process started from Swift's async tests inherits a blocked SIGTERM.)"""
import json
import os
import signal
import sqlite3
import subprocess
import tempfile
import time
import urllib.request

import pytest

from conftest import BIN, start

ROWS = 100_000


def stop(process, sig):
    """Sends `sig` and returns (exit status, seconds taken)."""
    started = time.time()
    process.send_signal(sig)
    try:
        status = process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        status = None
    return status, time.time() - started


def integrity(path):
    with sqlite3.connect(path) as db:
        return db.execute("PRAGMA integrity_check").fetchone()[0]


@pytest.fixture
def service():
    """`todosync serve` holding ROWS rows (one through the protocol, the rest written straight into
    its database)."""
    folder = tempfile.mkdtemp(prefix="todosync-signals-")
    database = os.path.join(folder, "service.sqlite")
    process, url = start(["serve", "--port", "0", "--database", database], r"(http://127\.0\.0\.1:\d+)")
    request = urllib.request.Request(
        url + "/tables/todoitem", data=json.dumps({"id": "first", "text": "x", "complete": False}).encode(),
        headers={"ZUMO-API-VERSION": "2.0.0", "Content-Type": "application/json"}, method="POST")
    assert urllib.request.urlopen(request, timeout=10).status == 201
    with sqlite3.connect(database, timeout=10) as db:
        db.execute("""
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
            INSERT INTO todoitem (id, createdAt, updatedAt, version, deleted, text, complete)
            SELECT printf('bulk-%06d', i), 1700000000000 + i, 1700000000000 + i, 'v' || i, 0, 'row ' || i, 0 FROM n
            """, (ROWS - 1,))
    yield process, url, folder
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def local_rows(store):
    with sqlite3.connect(store) as db:
        return db.execute("SELECT COUNT(*) FROM todoitem").fetchone()[0]


def wait_until_pulling(store, process, deadline=120):
    """Returns once the pull into `store` has stored rows (it runs, past its start-up): a signal
    then lands mid-pull, however slowly a loaded machine starts the process."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        assert process.poll() is None, "the process ended before the signal: %s" % (process.communicate(),)
        try:
            if os.path.exists(store) and local_rows(store) > 0:
                return
        except sqlite3.OperationalError:
            pass  # no table yet, or the store busy: ask again
        time.sleep(0.05)
    raise AssertionError("no row was pulled into %s within %d s" % (store, deadline))


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_client_pull_stops_on_a_signal_and_the_next_pull_converges(service, sig):
    _, url, folder = service
    store = os.path.join(folder, "client-%d.sqlite" % sig)
    pull = [BIN, "client", "--store", store, "--remote", url, "pull", "--query-id", "all", "--page-size", "200"]
    process = subprocess.Popen(pull, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_until_pulling(store, process)
    status, seconds = stop(process, sig)
    _, errors = process.communicate()
    assert status == 0, errors
    assert seconds < 5
    assert "Cancelled" in errors
    assert integrity(store) == "ok"
    assert local_rows(store) < ROWS
    subprocess.run(pull, check=True, capture_output=True, timeout=300)
    assert local_rows(store) == ROWS


def test_dashboard_stops_on_sigterm_mid_sync(service):
    _, url, folder = service
    data = os.path.join(folder, "dashboard")
    process, base = start(["dashboard", "--port", "0", "--data-dir", data, "--remote", url],
                          r"(http://127\.0\.0\.1:\d+)")
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
    status = json.load(opener.open(base + "/api/status", timeout=10))
    started = opener.open(urllib.request.Request(
        base + "/api/sync", data=b"", method="POST", headers={"X-CSRF-Token": status["csrfToken"]}), timeout=10)
    assert started.status == 202
    wait_until_pulling(os.path.join(data, "store.sqlite"), process)
    code, seconds = stop(process, signal.SIGTERM)
    assert code == 0
    assert seconds < 5
    store = os.path.join(data, "store.sqlite")
    assert integrity(store) == "ok"
    assert local_rows(store) < ROWS
    client = [BIN, "client", "--store", store, "pull", "--query-id", "dashboard", "--page-size", "1000"]
    subprocess.run(client, check=True, capture_output=True, timeout=300)
    assert local_rows(store) == ROWS


def test_serve_stops_on_sigint(service):
    process, _, _ = service
    code, seconds = stop(process, signal.SIGINT)
    assert code == 0
    assert seconds < 5


def test_demo_stops_on_sigterm():
    folder = tempfile.mkdtemp(prefix="todosync-demo-signals-")
    process, _ = start(["demo", "--port", "0", "--data-dir", folder],
                       r"(http://127\.0\.0\.1:\d+)")
    # At once: the signals are trapped before the demo starts anything.
    code, seconds = stop(process, signal.SIGTERM)
    assert code == 0
    assert seconds < 5


def test_dashboard_with_auto_sync_stops_on_sigterm_while_its_sync_waits_for_a_silent_service():
    from test_doctor import FakeService
    silent = FakeService(lying=False)
    folder = tempfile.mkdtemp(prefix="todosync-autosync-signals-")
    try:
        process, base = start(["dashboard", "--port", "0", "--data-dir", folder, "--remote", silent.url,
                               "--auto-sync", "5"], r"(http://127\.0\.0\.1:\d+)")
        assert silent.arrived.wait(30), "auto-sync syncs at start"
        status = json.load(urllib.request.urlopen(base + "/api/status", timeout=10))
        assert status["running"] and status["autoSync"]["enabled"] and status["autoSync"]["interval"] == 5
        code, seconds = stop(process, signal.SIGTERM)
        assert code == 0
        assert seconds < 5
    finally:
        silent.stop()
