"""`todosync client log` against the real binaries: every exchange of a push and a pull, with what
it served, filters, and no secret in the output or in the store file."""
import json
import os
import signal
import subprocess
import tempfile

import pytest

from conftest import BIN, start

KEY = "app-key-5d1e77aa"
TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYXJvbCJ9.c2lnbmVkLWJ5LWNhcm9s"


@pytest.fixture
def serve():
    folder = tempfile.mkdtemp(prefix="todosync-log-")
    process, url = start(["serve", "--port", "0", "--database", os.path.join(folder, "service.sqlite")],
                         r"(http://127\.0\.0\.1:\d+)")
    yield url, folder
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def client(url, store, *args, status=0):
    done = subprocess.run([BIN, "client", "--store", store, "--remote", url] + list(args),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == status, (args, done.stdout, done.stderr)
    return done.stdout + done.stderr


def test_log_lists_push_and_pull_exchanges_without_secrets(serve):
    url, folder = serve
    store = os.path.join(folder, "phone.sqlite")
    client(url, store, "--app-key", KEY, "--auth-token", TOKEN, "add", "milk", "--id", "m1")
    client(url, store, "push")
    client(url, store, "pull", "--query-id", "all")

    lines = [json.loads(line) for line in client(url, store, "log", "--json").splitlines()]
    assert [line["method"] for line in lines] == ["GET", "GET", "POST", "GET"]
    # The first: which protocol todosync serve speaks (--protocol auto, the default); it answers v2.
    assert lines[-1]["purpose"] == {"protocolProbe": {"table": "todoitem"}}
    assert "protocol: v2 (auto)" in client(url, store, "status")
    push = lines[-2]
    assert push["status"] == 201 and push["purpose"] == {"push": {"operationId": 1, "table": "todoitem", "itemId": "m1"}}
    assert "X-ZUMO-APPLICATION: [redacted]" in push["requestHeaders"]
    assert "X-ZUMO-AUTH: [redacted]" in push["requestHeaders"]
    assert lines[0]["purpose"]["pull"]["queryId"] == "all"

    text = client(url, store, "log", "--status", "201", "--bodies")
    assert "POST /tables/todoitem  201" in text and "push of operation 1 (todoitem m1)" in text
    assert '"milk"' in text
    assert client(url, store, "log", "--status", "failed") == ""
    assert client(url, store, "log", "--item", "m1").count("\n") == 2  # its push and the page that brought it

    refused = client(url, store, "log", "--status", "abc", status=64)
    assert "--status" in refused
    for output in (text, json.dumps(lines)):
        assert KEY not in output and TOKEN not in output
