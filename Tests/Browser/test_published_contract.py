"""The published contract holds: schemathesis (PyPI) reads `/openapi.json` from a real `todosync serve`
(SQLite in a temporary folder, a port the system picks) and tests every operation it describes with
Datasync v3 headers, every check it has and every phase (the document's examples, coverage of its
boundaries, random requests in and out of the schemas, and stateful sequences along the links it
infers). A
request the service answers other than as documented fails the test with schemathesis' report of it.

The run is bounded (examples per operation, a fixed seed, one worker): about 2,900 requests in 25 s.
What schemathesis may not check, and why, is in `schemathesis.toml` (410 for a deleted item) and
`contract_hooks.py` (a replacement's body id is its address's; a dynamic column keeps its first type).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

import pytest

from conftest import start

V3 = {"ZUMO-API-VERSION": "3.0.0"}

# Tables of every kind the document describes: declared columns of each type (a default, a renamed
# column's former name and a retired column among them), a table without soft delete whose PUT
# replaces the whole item, and a dynamic table whose columns take the types of the values written.
SCHEMA = {
    "todo": {
        "columns": {
            "title": {"type": "string", "renamedFrom": "text"},
            "complete": "boolean",
            "estimate": "number",
            "priority": {"type": "integer", "default": 3},
            "notes": {"type": "string", "retired": True},
        }
    },
    "movies": {
        "pageSize": 25,
        "softDelete": False,
        "putReplaces": True,
        "columns": {
            "title": "string",
            "year": "integer",
            "releaseDate": "date-only",
            "showing": "time-of-day",
            "premiere": "datetime",
            "rating": {"enum": ["Unrated", "G", "PG", "PG13", "NC17", "R"]},
        },
    },
}

# A few rows, so that list, read, replace and delete meet existing items as well as missing ones.
SEED = {
    "todo": [{"id": "t1", "title": "buy milk", "complete": False, "estimate": 1.5}],
    "movies": [{"id": "m1", "title": "Alien", "year": 1979, "releaseDate": "1979-05-25", "showing": "20:30:00",
                "premiere": "1979-05-25T19:00:00.000Z", "rating": "R"}],
    "todoitem": [{"id": "i1", "text": "call mum", "complete": True, "count": 2,
                  "due": "2026-01-02T03:04:05.000Z", "note": None}],
}

# CI's run; to explore further, e.g. CONTRACT_SEED=7 CONTRACT_EXAMPLES=500.
SEED_NUMBER = int(os.environ.get("CONTRACT_SEED", "38"))
EXAMPLES_PER_OPERATION = int(os.environ.get("CONTRACT_EXAMPLES", "100"))
RUN_DEADLINE = 600  # seconds; the run takes about 25 s, more on a loaded machine


def send(url, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url + path, data=data, method=method,
                                     headers=dict(V3, **({"Content-Type": "application/json"} if data else {})))
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.status, answer.read()


def read_document(url):
    status, body = send(url, "GET", "/openapi.json")
    assert status == 200
    return json.loads(body)


@pytest.fixture
def served():
    """`todosync serve` on a port the system picks, its tables in a SQLite file of a temporary
    folder, declared by `SCHEMA` and seeded with `SEED`."""
    folder = tempfile.mkdtemp(prefix="todosync-contract-")
    schema = os.path.join(folder, "schema.json")
    with open(schema, "w") as file:
        json.dump(SCHEMA, file)
    process, url = start(["serve", "--port", "0", "--quiet", "--database", os.path.join(folder, "service.sqlite"),
                          "--schema", schema], r"(http://127\.0\.0\.1:\d+)")
    try:
        for table, rows in SEED.items():
            for row in rows:
                status, _ = send(url, "POST", "/tables/" + table, row)
                assert status == 201
        yield url, folder
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        shutil.rmtree(folder, ignore_errors=True)


def schemathesis_command(url):
    st = os.path.join(os.path.dirname(sys.executable), "st")
    return [
        st, "--config-file", os.path.join(os.path.dirname(__file__), "schemathesis.toml"),
        "run", url + "/openapi.json",
        "--header", "ZUMO-API-VERSION: 3.0.0",
        "--checks", "all",
        "--mode", "all",
        "--phases", "examples,coverage,fuzzing,stateful",
        "--max-examples", str(EXAMPLES_PER_OPERATION),
        "--seed", str(SEED_NUMBER),
        "--generation-database", "none",
        "--workers", "1",
        # Above the longest wait the change channel's documented timeout allows (120 s).
        "--request-timeout", "130",
        "--no-color",
    ]


def test_schemathesis_finds_nothing_against_the_published_contract(served):
    url, folder = served
    document = read_document(url)
    for table in ("todo", "movies", "todoitem"):
        assert "/tables/%s/{id}" % table in document["paths"], "the document describes every table"
    started = time.monotonic()
    here = os.path.dirname(os.path.abspath(__file__))
    environment = dict(os.environ, SCHEMATHESIS_HOOKS=os.path.join(here, "contract_hooks.py"))
    # In the temporary folder: schemathesis keeps a cache in the folder it runs in.
    run = subprocess.run(schemathesis_command(url), capture_output=True, text=True, timeout=RUN_DEADLINE,
                         env=environment, cwd=folder)
    report = run.stdout + run.stderr
    print(report)
    print("schemathesis took %.1f s" % (time.monotonic() - started))
    assert run.returncode == 0, "schemathesis found the service and its document disagreeing:\n" + report

    # The columns the generated writes added are in the document now, with their types.
    document = read_document(url)
    for table in ("todo", "movies", "todoitem"):
        documented = document["components"]["schemas"][table]["properties"]
        status, body = send(url, "GET", "/tables/%s?__includedeleted=true&$top=1000" % table)
        for item in json.loads(body)["items"]:
            for name, value in item.items():
                assert name in documented, (table, name)
                assert fits(value, documented[name]["type"]), (table, name, value, documented[name])


def fits(value, types):
    """Whether a JSON value is of one of JSON Schema's `types` (a name or a list of them)."""
    types = types if isinstance(types, list) else [types]
    if value is None:
        return "null" in types
    if isinstance(value, bool):
        return "boolean" in types
    if isinstance(value, (int, float)):
        return "number" in types or ("integer" in types and float(value).is_integer())
    return {str: "string", list: "array", dict: "object"}[type(value)] in types
