#!/usr/bin/env python3
"""Checks one crash-loop run (used by scripts/crash-loop.sh).

  crash-check.py after-kill STORE SERVICE_URL MODEL   the store right after a SIGKILL
  crash-check.py converged  STORE SERVICE_URL MODEL   after a clean restart and sync

MODEL is a file of lines `add ID TEXT`, `edit ID TEXT`, `delete ID`: every local change made so far.
Prints one line per problem and exits 1 when there is any.
"""
import json
import sqlite3
import sys
import urllib.request

mode, store, service, model_path = sys.argv[1:5]
problems = []

expected = {}  # id -> text, or None when deleted
with open(model_path) as model:
    for line in model:
        parts = line.rstrip("\n").split(" ", 2)
        if parts[0] in ("add", "edit"):
            expected[parts[1]] = parts[2]
        elif parts[0] == "delete":
            expected[parts[1]] = None


def service_rows():
    rows, skip = {}, 0
    while True:
        request = urllib.request.Request(
            f"{service}/tables/todoitem?__includeDeleted=true&$orderby=id&$top=1000&$skip={skip}",
            headers={"ZUMO-API-VERSION": "2.0.0"})
        with urllib.request.urlopen(request, timeout=20) as reply:
            page = json.load(reply)
        for row in page:
            if row["id"] in rows:
                problems.append(f"the service has two rows with id {row['id']}")
            rows[row["id"]] = row
        if len(page) < 1000:
            return rows
        skip += len(page)


db = sqlite3.connect(store, timeout=10)
db.row_factory = sqlite3.Row
integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
if integrity != "ok":
    problems.append(f"integrity_check: {integrity}")
operations = db.execute("SELECT itemId, kind, state FROM __operations").fetchall()
local = {row["id"]: dict(row) for row in db.execute("SELECT * FROM todoitem")}
db.close()

queued = {}
for operation in operations:
    queued.setdefault(operation["itemId"], []).append(f"{operation['kind']} {operation['state']}")
for item_id, kinds in queued.items():
    if len(kinds) > 1:
        problems.append(f"{len(kinds)} operations queued for {item_id}: {kinds}")

server = service_rows()
live = {item_id: row for item_id, row in server.items() if not row.get("deleted")}

# Local edits are atomic: the local table always shows every change made, killed or not.
for item_id, text in expected.items():
    row = local.get(item_id)
    if text is None and row is not None:
        problems.append(f"local delete of {item_id} lost")
    elif text is not None and (row is None or row["text"] != text):
        problems.append(f"local change of {item_id} lost: {row and row['text']!r} instead of {text!r}")

# A change that left the queue is on the service.
for item_id, text in expected.items():
    if item_id in queued:
        continue
    remote = server.get(item_id)
    if text is None:
        if remote is not None and not remote.get("deleted"):
            problems.append(f"delete of {item_id} left the queue but the service still has the item")
    elif remote is None or remote.get("deleted") or remote.get("text") != text:
        problems.append(f"change of {item_id} left the queue but the service has {remote and remote.get('text')!r}")

# No duplicate rows: each text of ours lives in exactly one service row.
texts = {}
for row in live.values():
    texts[row.get("text")] = texts.get(row.get("text"), 0) + 1
for item_id, text in expected.items():
    if text is not None and texts.get(text, 0) > 1:
        problems.append(f"the service holds {texts[text]} rows with the text {text!r}")

if mode == "converged":
    if operations:
        problems.append(f"{len(operations)} operations left after a clean sync: {queued}")
    for item_id, row in local.items():
        remote = live.get(item_id)
        if remote is None:
            problems.append(f"local row {item_id} is not live on the service")
            continue
        for key in ("text", "version", "createdAt", "updatedAt"):
            if row[key] != remote.get(key):
                problems.append(f"{item_id}: local {key} {row[key]!r} != service {remote.get(key)!r}")
        if bool(row["complete"]) != bool(remote.get("complete")):
            problems.append(f"{item_id}: local complete {row['complete']!r} != service {remote.get('complete')!r}")
    for item_id in live:
        if item_id not in local:
            problems.append(f"service row {item_id} is missing locally")

for problem in problems[:20]:
    print(f"  {mode}: {problem}")
sys.exit(1 if problems else 0)
