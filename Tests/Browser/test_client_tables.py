"""`todosync client --table NAME` on any table of a real `todosync serve`: `--field NAME=VALUE` read by
the column's type, every column in `list --json`, updates that send only the changed columns, bad
values refused with nothing written, unknown tables named, kebab-case policies, and subcommand help
without a store."""
import json
import os
import signal
import subprocess
import tempfile
import urllib.request

import pytest

from conftest import BIN, start


@pytest.fixture
def serve():
    folder = tempfile.mkdtemp(prefix="todosync-client-tables-")
    process, url = start(["serve", "--port", "0", "--database", os.path.join(folder, "service.sqlite")],
                         r"(http://127\.0\.0\.1:\d+)")
    yield url, folder
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def client(url, folder, name, table="orders"):
    """`todosync client --table TABLE` on its own store: run(*args) returns (stdout, stderr)."""
    store = os.path.join(folder, name + ".sqlite")

    def run(*args, status=0):
        done = subprocess.run([BIN, "client", "--store", store, "--remote", url, "--table", table] + list(args),
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == status, (args, done.stdout, done.stderr)
        return done.stdout, done.stderr
    return run


def on_service(url, table, item):
    request = urllib.request.Request("%s/tables/%s/%s" % (url, table, item), headers={"ZUMO-API-VERSION": "2.0.0"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.load(answer)


def listed(run):
    return json.loads(run("list", "--json")[0])


def test_any_table_with_every_column_through_the_cli(serve):
    url, folder = serve
    a, b = client(url, folder, "a"), client(url, folder, "b")
    a("add", "--field", "customer=ACME", "--field", "total=12.5", "--field", "paid=false",
      "--field", "due=2026-12-01", "--field", "lines=3", "--id", "o1")
    a("push")
    out, _ = b("pull")
    assert "into orders" in out
    [order] = listed(b)
    assert order["customer"] == "ACME" and order["total"] == 12.5 and order["paid"] is False
    assert order["due"] == "2026-12-01T00:00:00.000Z" and order["lines"] == 3 and order["version"]

    # Values parse by the column's type: a real column takes 13, the service gets only that column.
    b("edit", "o1", "--field", "total=13")
    b("push")
    server = on_service(url, "orders", "o1")
    assert server["total"] == 13 and server["customer"] == "ACME"
    # A field the table has no column for adds one.
    b("edit", "o1", "--field", "region=north")
    assert listed(b)[0]["region"] == "north"
    out, _ = b("list")
    assert 'region="north"' in out and 'customer="ACME"' in out


@pytest.mark.parametrize("field,column", [("total=abc", "total"), ("paid=maybe", "paid"),
                                          ("due=2026-13-45", "due"), ("lines=1.5", "lines")])
def test_a_value_that_does_not_fit_its_column_is_refused_and_nothing_is_written(serve, field, column):
    url, folder = serve
    a = client(url, folder, "a")
    a("add", "--field", "customer=ACME", "--field", "total=12.5", "--field", "paid=false",
      "--field", "due=2026-12-01", "--field", "lines=3", "--id", "o1")
    before = listed(a)
    status_before = a("status", "--json")[0]
    _, error = a("edit", "o1", "--field", field, status=1)
    assert "--field " + field in error and "'%s'" % column in error and "Nothing was changed" in error
    _, error = a("add", "--field", "customer=Other", "--field", field, status=1)
    assert "'%s'" % column in error
    assert listed(a) == before
    assert a("status", "--json")[0] == status_before


def test_unknown_and_invalid_tables_are_named(serve):
    url, folder = serve
    run = client(url, folder, "a", table="nope")
    _, error = run("list", status=1)
    assert "'nope'" in error
    _, error = run("pull", status=1)
    assert "no table 'nope'" in error
    _, error = run("list", status=1)
    assert "'nope'" in error
    bad = client(url, folder, "a", table="no-pe")
    _, error = bad("list", status=64)
    assert "'no-pe' is not a table name" in error


def test_policies_are_kebab_case_and_camel_case_still_works(serve):
    url, folder = serve
    a = client(url, folder, "a")
    a("add", "--field", "customer=ACME")
    assert a("policy", "server-wins")[0].strip() == "orders: server-wins"
    assert json.loads(a("policy", "clientWins", "--json")[0])["policy"] == "client-wins"
    assert a("policy")[0].strip() == "orders: client-wins"


@pytest.mark.parametrize("command,overview", [("push", "Send the queued changes"), ("add", "Add an item locally")])
def test_a_subcommands_help_needs_no_store(command, overview):
    done = subprocess.run([BIN, "client", command, "--help"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert overview in done.stdout
