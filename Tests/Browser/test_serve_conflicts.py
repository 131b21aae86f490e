"""The README's conflict walkthrough against the real binaries: `todosync serve` as the service and
two `todosync client` stores as the two phones. The tutorial conflict, a merge by the default
policy, an overturn that pushes, one that meets a service that moved (a new conflict), and the
overturn of an accepted delete (the todo comes back)."""
import json
import os
import signal
import subprocess
import tempfile
import urllib.error
import urllib.request

import pytest

from conftest import BIN, start


@pytest.fixture
def serve():
    folder = tempfile.mkdtemp(prefix="todosync-serve-conflicts-")
    process, url = start(["serve", "--port", "0", "--database", os.path.join(folder, "service.sqlite")],
                         r"(http://127\.0\.0\.1:\d+)")
    yield url, folder
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def phone(url, folder, name):
    """`todosync client` on its own store: run(*args) returns standard output and checks the exit status."""
    store = os.path.join(folder, name + ".sqlite")

    def run(*args, status=0):
        done = subprocess.run([BIN, "client", "--store", store, "--remote", url] + list(args),
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == status, (args, done.stdout, done.stderr)
        return done.stdout
    return run


def on_service(url, item):
    """The service's copy of the todo, or None when it is deleted."""
    request = urllib.request.Request(url + "/tables/todoitem/" + item, headers={"ZUMO-API-VERSION": "2.0.0"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.load(answer)
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise


def journal(run):
    return [json.loads(line) for line in run("journal", "--json").splitlines()]


def only_conflict(run):
    conflicts = json.loads(run("conflicts", "--json"))
    assert len(conflicts) == 1, conflicts
    conflict = conflicts[0]
    return conflict, {field["name"]: field for field in conflict["fields"]}


def test_merge_and_overturn_against_todosync_serve(serve):
    url, folder = serve
    a, b = phone(url, folder, "a"), phone(url, folder, "b")
    a("add", "buy milk")
    a("push")
    b("pull")
    item = json.loads(a("list", "--json"))[0]["id"]

    # The tutorial's conflict: both change the text; B takes the server's.
    a("edit", item, "--text", "buy oat milk")
    a("push")
    b("edit", item, "--text", "buy soy milk")
    assert "1 conflict" in b("push")
    conflict, fields = only_conflict(b)
    assert fields["text"]["client"] == "buy soy milk" and fields["text"]["server"] == "buy oat milk"
    b("resolve", str(conflict["operation"]), "use-server")

    # A merge: A changes the text, B only ticks it off; no prompt.
    a("edit", item, "--text", "buy milk and bread")
    a("push")
    b("edit", item, "--complete", "true")
    b("push")
    assert json.loads(b("conflicts", "--json")) == []
    server = on_service(url, item)
    assert server["text"] == "buy milk and bread" and server["complete"] is True
    merge, use_server = journal(b)
    assert merge["decision"] == "merge" and merge["decidedBy"] == "merge-policy"
    assert use_server["decision"] == "use-server" and use_server["decidedBy"] == "person"

    # Overturning the merge puts the service's values of that moment back.
    assert "Overturned" in b("overturn", merge["id"])
    server = on_service(url, item)
    assert server["text"] == "buy milk and bread" and server["complete"] is False
    overturn = journal(b)[0]
    assert overturn["decision"] == "overturn" and overturn["overturns"] == merge["id"]

    # Overturning the older Use Server meets a service that moved since: a new conflict, no overwrite.
    assert "new conflict" in b("overturn", use_server["id"], status=1)
    assert on_service(url, item)["text"] == "buy milk and bread"
    conflict, fields = only_conflict(b)
    assert fields["text"]["client"] == "buy soy milk" and fields["text"]["server"] == "buy milk and bread"
    assert len(journal(b)) == 3, "nothing decided by the conflict"
    b("resolve", str(conflict["operation"]), "use-server")

    # A deletes the todo while B edits it; B accepts the delete, then overturns that: it comes back.
    a("pull")
    a("delete", item)
    a("push")
    assert on_service(url, item) is None
    b("edit", item, "--text", "buy bread only")
    assert "1 conflict" in b("push")
    conflict, _ = only_conflict(b)
    assert conflict["deletedOnServer"] is True
    b("resolve", str(conflict["operation"]), "use-server")
    accepted = journal(b)[0]
    assert accepted["decision"] == "use-server" and "result" not in accepted
    assert "Overturned" in b("overturn", accepted["id"])
    assert on_service(url, item)["text"] == "buy bread only"
    a("pull")
    assert [row["text"] for row in json.loads(a("list", "--json"))] == ["buy bread only"]
