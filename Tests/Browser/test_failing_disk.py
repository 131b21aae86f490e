"""A disk that refuses to save (EIO from fsync) under the real binaries: the service and a client store
sit on the power-cut filesystem (Tests/PowerCut) with its syncs made to fail. What the disk would not
save is never confirmed (a 503 with a readable message; a command that exits non-zero and says why),
nothing confirmed before is lost, and once the disk works again a restart confirms writes again."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from conftest import BIN, start

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "PowerCut"))
from mount import PowerCutMount  # noqa: E402

HEADERS = {"ZUMO-API-VERSION": "2.0.0", "Content-Type": "application/json"}


def insert(url, item_id):
    """(status, parsed body) of a POST of one todo."""
    request = urllib.request.Request(url + "/tables/todoitem", method="POST", headers=HEADERS,
                                     data=json.dumps({"id": item_id, "text": item_id}).encode())
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def serve(database, port=0):
    """`todosync serve` on `database`; again on `port` after a restart (the client keeps the address:
    the port of a killed process may take a moment to be free)."""
    for attempt in range(10):
        try:
            return start(["serve", "--port", str(port), "--database", database, "--quiet"],
                         r"(http://127\.0\.0\.1:\d+)")
        except Exception:
            if attempt == 9:
                raise
            time.sleep(0.5)


def stop(process):
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def test_a_disk_that_refuses_to_save_is_an_error_never_a_confirmation():
    folder = tempfile.mkdtemp(prefix="todosync-failing-disk-")
    with PowerCutMount(folder) as disk:
        database = os.path.join(disk.path, "service.sqlite")
        store = os.path.join(disk.path, "client.sqlite")
        process, url = serve(database)
        try:
            assert insert(url, "before")[0] == 201

            def client(*args):
                return subprocess.run([BIN, "client", "--store", store, "--remote", url] + list(args),
                                      capture_output=True, text=True, timeout=60)
            assert client("add", "saved before", "--id", "kept").returncode == 0

            disk.fail_syncs(True)
            status, body = insert(url, "refused")
            assert status == 503, body
            assert "could not save the change to its disk" in body.get("error", json.dumps(body)), body
            added = client("add", "not saved", "--id", "lost")
            assert added.returncode != 0, added.stdout
            assert "disk" in added.stderr.lower(), added.stderr

            # The disk works again: the service still refuses (the kernel may have dropped what it could
            # not write) until it is restarted; then it confirms again, and nothing confirmed is gone.
            disk.fail_syncs(False)
            assert insert(url, "after, same process")[0] == 503
            stop(process)
            process, url = serve(database, port=int(url.rsplit(":", 1)[1]))
            assert insert(url, "after a restart")[0] == 201
            listed = client("list", "--json")
            assert listed.returncode == 0, listed.stderr
            assert "kept" in {item["id"] for item in json.loads(listed.stdout)}
            request = urllib.request.Request(url + "/tables/todoitem/before", headers=HEADERS)
            with urllib.request.urlopen(request, timeout=30) as answer:
                assert answer.status == 200
        finally:
            stop(process)
