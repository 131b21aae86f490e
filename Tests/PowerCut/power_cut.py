#!/usr/bin/env python3
"""One power cut under `todosync serve` and `todosync client` (issue 34), and what must survive it.

    Tests/PowerCut/power_cut.py --seed S          (scripts/power-cut-loop.sh N runs N of these)
    Tests/PowerCut/power_cut.py --seed S --store postgres
                                                  the service on PostgreSQL (issue 50)

Every SQLite file sits on powercut_fs.py, which keeps unsynced writes in memory only. While four
threads POST inserts to the service and clients add items (`client add`) and push and pull in the
background, the seed picks a moment: during inserts (after k answers 201), during a push (after k
operations left a client's queue), during a pull (after a fresh client stored k rows), during a
checkpoint-heavy phase (large rows; after the service's first checkpoint and k more answers) or
during a conflict decision (a client's Use Client, Use Server or a merge picking each field's side,
cut a few milliseconds into it or just after it) or during a migration (the service restarted with
a schema that gives thousands of rows a default, cut while its backfill stamps them) or during a
restore (the service stopped, `todosync restore --to latest` replacing its file from its backup) or
during a revoke (client r's device revoked with wipe: its pull deposits its ten offline changes in the
service's escrow, then wipes its store and sends the receipt). Every
other cycle of the phases the service backs up continuously (`--backup-dir`) to the same disk. Then
every todosync process is SIGKILLed, the power is cut (everything unsynced is lost), the service
starts again on the same port and this checks:

- every insert the service answered 201 is on the service;
- every `client add` that exited 0 is either queued in the client's store or on the service;
- every SQLite file passes `PRAGMA integrity_check`;
- a decision the command confirmed (exit 0) holds: the service has the value the decision chose
  (the client's after Use Client, its own after Use Server); one it did not confirm may be made again;
- after a migration, the backfill finishes at the next start: every row holds the default, and no
  two rows share a stamp (`updatedAt`);
- `client push` and `client pull` then succeed, and each client holds exactly the service's rows;
- with a backup: `todosync restore --to latest` of the backup passes `integrity_check` and holds every
  insert answered before its second-newest segment was written (the next round shipped it);
- after a cut during a restore: the file is whole and either the old one or the restored one (with
  its epoch), holding the same rows; a restore that exited 0 left the restored one;
- after a cut during a revoke: client r's store is untouched (its changes queued) or wiped with every
  change in escrow, never wiped with a change lost; its next contact finishes the steps, and escrow
  then holds each change once (the deposit is idempotent).

With --store postgres the service keeps its tables in a PostgreSQL cluster (postgres.py) whose data
directory is on the same disk, durable (fsync and synchronous_commit on). The cut SIGKILLs the
postmaster and every backend with the todosync processes; after it PostgreSQL starts again on the same
data directory and port (crash recovery from the WAL that was synced), then the service. The phases
are those that do not need a SQLite service (POSTGRES_PHASES: inserts, push, pull, decision,
revoke), never with a backup, and the same checks hold, pg_amcheck of the database standing in for
the service file's integrity_check. POSTGRES_OPTIONS="-c synchronous_commit=off" makes it fail:
PostgreSQL then answers commits before their WAL is synced, and the cut takes the last of them.

Prints one line about the run and one per problem; exit status 1 on any problem. A failed run keeps
its folder (logs, postgres.log, and the durable state in backing/) and prints how to replay it.
TODOSYNC_BIN names the binary (default .build/debug/todosync). Needs FUSE: fuse3 and python3-fusepy,
and PostgreSQL's server for --store postgres (scripts/install-deps.sh test).
"""
import argparse
import http.client
import itertools
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import nullcontext

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mount import PowerCutMount  # noqa: E402
from postgres import PostgresOnDisk  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("TODOSYNC_BIN") or os.path.join(ROOT, ".build", "debug", "todosync")
PHASES = ("inserts", "push", "pull", "checkpoint", "decision", "migration", "restore", "revoke")
# On PostgreSQL: not the checkpoint (SQLite's WAL), the migration (its checks read the SQLite file)
# nor the restore (--backup-dir backs up SQLite only).
POSTGRES_PHASES = ("inserts", "push", "pull", "decision", "revoke")
# The migration: todoitem declared with a text, then given a priority with a default.
SCHEMA_BEFORE = {"todoitem": {"columns": {"text": "string"}}}
SCHEMA_AFTER = {"todoitem": {"columns": {"text": "string", "priority": {"type": "integer", "default": 3}}}}
HEADERS = {"ZUMO-API-VERSION": "2.0.0", "Content-Type": "application/json"}
INSERTERS = 4
DEADLINE = 90  # seconds for anything awaited: generous, for a loaded machine
ADMIN_KEY = "power-cut-admin-key-0123456789"  # the revoke phase's service runs with it


class Cut(Exception):
    """The power is going: no todosync process may start."""


class Processes:
    """Every todosync process of the run, so that the cut can kill them all."""

    def __init__(self, folder):
        self.folder, self.lock, self.live, self.cutting = folder, threading.Lock(), set(), False

    def start(self, args, log_name):
        with self.lock:
            if self.cutting:
                raise Cut()
            with open(os.path.join(self.folder, log_name + ".log"), "a") as log:
                process = subprocess.Popen([BIN] + args, stdout=log, stderr=subprocess.STDOUT)
            self.live.add(process)
            return process

    def run(self, args, log_name):
        """Runs a command to its end (or the cut's SIGKILL); its exit status."""
        process = self.start(args, log_name)
        status = process.wait()
        with self.lock:
            self.live.discard(process)
        return status

    def output(self, args):
        """What a short command printed; it must succeed."""
        with self.lock:
            if self.cutting:
                raise Cut()
        done = subprocess.run([BIN] + args, capture_output=True, text=True, timeout=DEADLINE)
        if done.returncode != 0:
            raise RuntimeError(f"todosync {' '.join(args[:1] + args[-2:])} failed: {done.stderr.strip()}")
        return done.stdout

    def kill_all(self):
        with self.lock:
            self.cutting = True
            for process in self.live:
                process.kill()
            for process in self.live:
                process.wait()
            self.live.clear()

    def resume(self):
        with self.lock:
            self.cutting = False


class Service:
    """`todosync serve` on the mount; after a cut it starts again on the same port (the clients'
    stores remember its address)."""

    def __init__(self, processes, database):
        self.processes, self.database, self.port, self.url = processes, database, 0, None
        self.schema, self.process = None, None  # the --schema file, if any; the running process
        self.backup_dir = None  # the --backup-dir folder, if any
        self.admin_key = None  # --admin-key, if any

    def start(self):
        log_path = os.path.join(self.processes.folder, "serve.log")
        deadline = time.monotonic() + DEADLINE
        schema = ["--schema", self.schema] if self.schema else []
        schema += ["--backup-dir", self.backup_dir] if self.backup_dir else []
        schema += ["--admin-key", self.admin_key] if self.admin_key else []
        while True:
            offset = os.path.getsize(log_path) if os.path.exists(log_path) else 0
            process = self.processes.start(
                ["serve", "--port", str(self.port), "--database", self.database, "--quiet"] + schema, "serve")
            self.process = process
            while process.poll() is None and time.monotonic() < deadline:
                with open(log_path) as log:
                    log.seek(offset)
                    match = re.search(r"http://127\.0\.0\.1:(\d+)", log.read())
                if match:
                    self.port, self.url = int(match.group(1)), match.group(0)
                    return
                time.sleep(0.05)
            process.kill()
            process.wait()
            self.process = None
            with open(log_path) as log:
                log.seek(offset)
                output = log.read()[-2000:]
            # The port of the killed instance may take a moment to be free again.
            if time.monotonic() > deadline or "cannot listen" not in output.lower():
                raise RuntimeError(f"todosync serve did not start: {output.strip()}")

    def restart(self, schema):
        """Stops the service (SIGTERM, as an upgrade does) and starts it with the `schema` file."""
        self.process.terminate()
        self.process.wait(DEADLINE)
        self.schema = schema
        self.start()

    def rows(self):
        """Every row (deleted ones too), by id."""
        rows, skip = {}, 0
        while True:
            status, page = request(self.url, "GET",
                                   f"/tables/todoitem?__includeDeleted=true&$orderby=id&$top=1000&$skip={skip}")
            if status != 200:
                raise RuntimeError(f"GET /tables/todoitem answered {status}: {page}")
            rows.update((row["id"], row) for row in page)
            if len(page) < 1000:
                return rows
            skip += len(page)


def request(url, method, path, body=None, connection=None, admin=False):
    """(status, parsed body) of one request (`admin`: with the admin key); `connection` is kept alive
    by the caller."""
    own = connection is None
    connection = connection or http.client.HTTPConnection(url.removeprefix("http://"), timeout=30)
    headers = dict(HEADERS, Authorization=f"Bearer {ADMIN_KEY}") if admin else HEADERS
    try:
        connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        answer = connection.getresponse()
        data = answer.read()
        return answer.status, json.loads(data) if data else None
    finally:
        if own:
            connection.close()


def query(path, sql):
    """One read of a store that todosync may be writing: a read-only connection, which never
    checkpoints (a checkpoint would make our reads durable for it). None when there is nothing."""
    if not os.path.exists(path):
        return None
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
        try:
            return db.execute(sql).fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return None


class Run:
    """One run: the load, the cut at the seed's moment, and the checks (their findings in `problems`)."""

    def __init__(self, seed, folder, disk, cluster=None):
        """`cluster`: the service stores its tables in this PostgresOnDisk, not in a SQLite file."""
        phases = POSTGRES_PHASES if cluster else PHASES
        self.rng, self.phase = random.Random(seed), phases[seed % len(phases)]
        self.folder, self.disk, self.cluster = folder, disk, cluster
        self.processes = Processes(folder)
        self.service = Service(self.processes, cluster.url if cluster else os.path.join(disk.path, "service.sqlite"))
        self.acked_inserts, self.insert_errors = [], []
        self.acked_at = {}  # insert id -> when its 201 arrived (seconds since 1970)
        self.acked_adds = {}  # client name -> ids whose `client add` exited 0
        self.clients = []  # names, in order of first use
        self.threads = []
        self.lock = threading.Lock()
        self.moment, self.problems = "", []
        self.decision = None  # (choice, confirmed) of the decision phase
        if self.phase == "migration":
            self.service.schema = self.schema_file("before", SCHEMA_BEFORE)
        # Every other cycle of the phases, and the restore phase always, the service backs up
        # continuously to a folder on the power-cut disk (issue 51).
        self.backup = self.phase == "restore" or (not cluster and (seed // len(PHASES)) % 2 == 1)
        if self.backup:
            self.service.backup_dir = os.path.join(disk.path, "backup")
        self.restoring = None  # (rows before, inserts answered, confirmed) of the restore phase
        self.backup_report = None  # what the check of the backup found
        # The restore phase holds the load before it stops the service (a request arriving on a
        # kept-alive connection while `serve` stops can abort it: HTTPServer's stop, not the backup).
        self.held, self.busy = threading.Event(), 0
        self.revoked = None  # (device, the exit status of the pull, when it ended before the cut)
        self.escrowed = set()  # ids of client r's adds held in the service's escrow
        if self.phase == "revoke":
            self.service.admin_key = ADMIN_KEY

    def schema_file(self, name, schema):
        """A --schema file (off the power-cut disk: an upgrade's files are in place before it)."""
        path = os.path.join(self.folder, f"schema-{name}.json")
        with open(path, "w") as file:
            json.dump(schema, file)
        return path

    def store(self, name):
        return os.path.join(self.disk.path, f"client-{name}.sqlite")

    def client(self, name, *args):
        if name not in self.clients:
            self.clients.append(name)
        return ["client", "--store", self.store(name), "--remote", self.service.url] + list(args)

    def add(self, name, number):
        item_id = f"{name}-{number}"
        if self.processes.run(self.client(name, "add", f"text of {item_id}", "--id", item_id), f"client-{name}") == 0:
            with self.lock:
                self.acked_adds.setdefault(name, []).append(item_id)

    # The load ------------------------------------------------------------------------------------

    def insert(self, thread, text_size, pause):
        """Inserts until the cut, `pause` seconds apart (a pace that leaves the clients some CPU)."""
        connection = http.client.HTTPConnection(self.service.url.removeprefix("http://"), timeout=30)
        number = 0
        while not self.processes.cutting:
            time.sleep(pause)
            if self.held.is_set():
                time.sleep(0.01)
                continue
            with self.lock:
                self.busy += 1
            try:
                number = self.insert_one(thread, text_size, connection, number)
            finally:
                with self.lock:
                    self.busy -= 1
        connection.close()

    def insert_one(self, thread, text_size, connection, number):
        """One insert of `insert`; the number it used."""
        number += 1
        item_id = f"s{thread}-{number}"
        try:
            status, _ = request(self.service.url, "POST", "/tables/todoitem",
                                {"id": item_id, "text": f"{item_id} " + "x" * text_size}, connection)
        except (OSError, http.client.HTTPException) as error:
            if not self.processes.cutting:
                self.insert_errors.append(f"{item_id}: {error}")
            connection.close()
            time.sleep(0.01)  # the service may be restarting (a migration): not a busy loop
            return number
        with self.lock:
            if status == 201:
                self.acked_inserts.append(item_id)
                self.acked_at[item_id] = time.time()
            else:
                self.insert_errors.append(f"{item_id}: status {status}")
        return number

    def background_client(self):
        """Client `a`: three adds, a push, and every second round a pull, until the cut."""
        try:
            for round_ in itertools.count(1):
                while self.held.is_set() and not self.processes.cutting:
                    time.sleep(0.01)
                with self.lock:
                    self.busy += 1
                try:
                    self.client_round(round_)
                finally:
                    with self.lock:
                        self.busy -= 1
        except Cut:
            pass

    def client_round(self, round_):
        """One round of client `a`: three adds, a push, and every second round a pull."""
        for n in range(3):
            self.add("a", round_ * 10 + n)
        self.processes.run(self.client("a", "push"), "client-a")
        if round_ % 2 == 0:
            self.processes.run(self.client("a", "pull", "--query-id", "all", "--page-size", "20"), "client-a")

    def spawn(self, target, *args):
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self.threads.append(thread)

    def wait_for(self, what, condition):
        deadline = time.monotonic() + DEADLINE
        while not condition():
            if time.monotonic() > deadline:
                raise RuntimeError(f"waited {DEADLINE} s for {what}")
            time.sleep(0.01)

    def acked(self):
        with self.lock:
            return len(self.acked_inserts)

    def load_until_the_moment(self):
        """Starts the load and returns at the seed's moment of the phase."""
        # Large rows fill the service's WAL (1000 pages) in about a hundred inserts; a push or a pull
        # meets a steady stream of inserts, the other phases as many as the service can take.
        text_size = 32_000 if self.phase == "checkpoint" else 20
        pause = 0.05 if self.phase in ("push", "pull") else 0
        for thread in range(INSERTERS):
            self.spawn(self.insert, thread, text_size, pause)
        self.spawn(self.background_client)
        rng = self.rng
        if self.phase == "inserts":
            k = rng.randint(20, 80)
            self.wait_for(f"{k} inserts answered 201 and an add", lambda: self.acked() >= k and self.acked_adds)
            self.moment = f"during inserts, after {k} answered 201 and client a's first add"
        elif self.phase == "push":
            count, window = rng.randint(3, 8), rng.choice([1, 4, 16])
            k = rng.randint(1, count - 1)
            for n in range(count):
                self.add("b", n)
            push = self.processes.start(self.client("b", "--push-window", str(window), "push"), "client-b")

            def pushed():
                left = query(self.store("b"), "SELECT COUNT(*) FROM __operations")
                return left is not None and left <= count - k
            self.wait_for("the push", lambda: push.poll() is not None or pushed())
            self.moment = (f"after the push (window {window}) had ended" if push.poll() is not None
                           else f"during a push (window {window}), after {k} of {count} operations left the queue")
        elif self.phase == "pull":
            rows = rng.randint(20, 60)
            k = rng.randint(1, rows - 1)
            self.wait_for(f"{rows} rows on the service", lambda: self.acked() >= rows)
            pull = self.processes.start(self.client("c", "pull", "--query-id", "all", "--page-size", "5"), "client-c")
            count = "SELECT COUNT(*) FROM todoitem"
            self.wait_for("the pull", lambda: pull.poll() is not None or (query(self.store("c"), count) or 0) >= k)
            self.moment = ("after the pull had ended" if pull.poll() is not None
                           else f"during a pull, after {k} rows had arrived")
        elif self.phase == "decision":
            self.moment = self.decide()
        elif self.phase == "migration":
            self.moment = self.migrate()
        elif self.phase == "restore":
            self.moment = self.restore()
        elif self.phase == "revoke":
            self.moment = self.revoke()
        else:
            database = self.service.database
            size = os.path.getsize(database) if os.path.exists(database) else 0
            self.wait_for("a checkpoint of the service", lambda: os.path.exists(database)
                          and os.path.getsize(database) > size)
            k, start = rng.randint(0, 60), self.acked()
            self.wait_for(f"{k} more inserts", lambda: self.acked() >= start + k)
            self.moment = f"during checkpoint-heavy inserts, {k} answers after the service's first checkpoint"

    # A conflict, and its decision -------------------------------------------------------------

    DECIDED_ITEM, CLIENT_TEXT, SERVER_TEXT = "d-1", "changed on client d", "changed on the service"

    def decide(self):
        """Client d's item changes on the service and in d's store; d's push meets the conflict and
        d starts deciding it. Returns the moment, a few milliseconds into the decision or after it."""
        item = self.DECIDED_ITEM
        self.add("d", 1)
        if self.processes.run(self.client("d", "push"), "client-d") != 0:
            raise RuntimeError("client d's first push failed")
        status, _ = request(self.service.url, "PATCH", f"/tables/todoitem/{item}", {"text": self.SERVER_TEXT})
        if status != 200:
            raise RuntimeError(f"the service's edit of {item} answered {status}")
        if self.processes.run(self.client("d", "edit", item, "--text", self.CLIENT_TEXT), "client-d") != 0:
            raise RuntimeError("client d's edit failed")
        self.processes.run(self.client("d", "push"), "client-d")
        conflicts = json.loads(self.processes.output(self.client("d", "conflicts", "--json")))
        if len(conflicts) != 1:
            raise RuntimeError(f"client d should have one conflict, has {len(conflicts)}")
        # Not Cancel: it leaves the change pending, to conflict again at the next push (nothing is decided).
        choice = self.rng.choice(["use-client", "use-server", "pick text=client", "pick text=server"])
        # A third of the cuts come right after the decision was confirmed, the others 0-600 ms into it
        # (a debug build's command takes a few hundred milliseconds).
        after = self.rng.random() < 1 / 3
        delay = self.rng.uniform(0, 0.6)
        started = time.monotonic()
        resolve = self.processes.start(self.resolve_args(conflicts[0]["operation"], choice), "client-d")
        if after:
            resolve.wait(DEADLINE)
        else:
            time.sleep(delay)
        confirmed = resolve.poll() == 0
        self.decision = (choice, confirmed)
        return (f"{(time.monotonic() - started) * 1000:.0f} ms into client d's {choice}, "
                + ("after it was confirmed" if confirmed else "before it was confirmed"))

    def settle_decision(self):
        """After the cut: a decision that was not confirmed is made again, as the person would."""
        choice, confirmed = self.decision
        left = json.loads(self.processes.output(self.client("d", "conflicts", "--json")))
        if confirmed and left:
            self.problems.append(f"client d's {choice} exited 0, yet its conflict is back after the cut")
        for conflict in left:
            if self.processes.run(self.resolve_args(conflict["operation"], choice), "client-d") != 0:
                self.problems.append(f"client d's {choice} after the cut failed (client-d.log)")

    def resolve_args(self, operation, choice):
        """`client resolve OP use-client`, or `... pick --field text=client` for "pick text=client"."""
        words = choice.split()
        return self.client("d", "resolve", str(operation), words[0], *(["--field", words[1]] if words[1:] else []))

    def check_decision(self, service):
        choice, _ = self.decision
        wanted = self.CLIENT_TEXT if choice in ("use-client", "pick text=client") else self.SERVER_TEXT
        text = service.get(self.DECIDED_ITEM, (None,))[0]
        if text != wanted:
            self.problems.append(f"after client d's {choice} the service holds {text!r}, not {wanted!r}")

    # A migration ------------------------------------------------------------------------------

    def migrate(self):
        """Thousands of rows in, a client pulls them all, then the service restarts with a schema
        that gives each a default. Returns the moment: after k rows of the backfill were stamped."""
        rows = self.rng.randint(2000, 4000)
        self.wait_for(f"{rows} inserts answered 201", lambda: self.acked() >= rows)
        if self.processes.run(self.client("c", "pull", "--query-id", "all", "--page-size", "500"), "client-c") != 0:
            raise RuntimeError("client c's pull before the migration failed")
        self.service.restart(self.schema_file("after", SCHEMA_AFTER))
        k = self.rng.randint(0, rows)
        stamped = "SELECT coalesce(max(stamped), 0) FROM __schema_changes WHERE columnName = 'priority'"
        done = "SELECT count(*) FROM __schema_changes WHERE columnName = 'priority' AND backfill = 'done'"
        self.wait_for("the backfill", lambda: (query(self.service.database, stamped) or 0) >= k
                      or (query(self.service.database, done) or 0) > 0)
        if query(self.service.database, done):
            return f"after a migration's backfill had ended ({rows}+ rows)"
        return f"during a migration, after {query(self.service.database, stamped)} of {rows}+ rows were stamped"

    def check_migration(self):
        """The backfill ends after the restart: every row has the default, each its own stamp."""
        database = self.service.database
        done = "SELECT count(*) FROM __schema_changes WHERE columnName = 'priority' AND backfill = 'done'"
        try:
            self.wait_for("the backfill to end after the restart", lambda: (query(database, done) or 0) > 0)
        except RuntimeError as error:
            self.problems.append(str(error))
            return
        missing = query(database, "SELECT count(*) FROM todoitem WHERE priority IS NULL")
        if missing:
            self.problems.append(f"{missing} rows lack the default after the migration")
        shared = query(database, "SELECT count(*) - count(DISTINCT updatedAt) FROM todoitem")
        if shared:
            self.problems.append(f"{shared} rows share a stamp with another after the migration")

    # Revoking a device (issue 53) ---------------------------------------------------------------

    REVOKED = "r"

    def revoke(self):
        """Client r syncs three rows and makes ten changes offline; its device is revoked with wipe,
        and its next pull deposits them in escrow, wipes the store and sends the receipt. Returns the
        moment: a few hundred milliseconds into that pull, or after it."""
        name = self.REVOKED
        for n in range(3):
            self.add(name, n)
        if self.processes.run(self.client(name, "push"), f"client-{name}") != 0:
            raise RuntimeError("client r's first push failed")
        for n in range(3, 13):
            self.add(name, n)
        device = query(self.store(name), "SELECT value FROM __config WHERE key = 'installationID'")
        status, answer = request(self.service.url, "POST", f"/service/api/devices/{device}/revoke", {"wipe": True},
                                 admin=True)
        if status != 200:
            raise RuntimeError(f"the revoke of client r's device answered {status}: {answer}")
        after = self.rng.random() < 1 / 3
        delay = self.rng.uniform(0, 0.6)  # a debug build's pull, deposit and wipe take a few hundred ms
        started = time.monotonic()
        pull = self.processes.start(self.client(name, "pull", "--query-id", "all"), f"client-{name}")
        if after:
            pull.wait(DEADLINE)
        else:
            time.sleep(delay)
        self.revoked = (device, pull.poll())
        return (f"{(time.monotonic() - started) * 1000:.0f} ms into the pull of revoked client r"
                + (" (it had ended)" if pull.poll() is not None else ""))

    def escrow_of(self, device):
        """The item ids the service's escrow holds for `device`, one per entry."""
        status, answer = request(self.service.url, "GET", "/service/api/escrow", admin=True)
        if status != 200:
            raise RuntimeError(f"GET /service/api/escrow answered {status}: {answer}")
        return [entry["itemId"] for entry in answer["escrow"] if entry["device"] == device]

    def check_revoke(self):
        """After the cut: client r's store is untouched or wiped with everything in escrow; its next
        contact completes the steps, escrow then holds each change once; then access is restored."""
        name, (device, exit_status) = self.REVOKED, self.revoked
        offline = [f"{name}-{n}" for n in range(3, 13) if f"{name}-{n}" in self.acked_adds.get(name, [])]
        store = self.store(name)
        rows = query(store, "SELECT count(*) FROM todoitem")
        queued = query(store, "SELECT count(*) FROM __operations")
        held = self.escrow_of(device)
        if rows == 0 and queued == 0:
            lost = [item_id for item_id in offline if item_id not in held]
            if lost:
                self.problems.append(f"client r's store was wiped, yet {len(lost)} of its offline changes are not in "
                                     f"escrow, such as {lost[:3]}")
        elif queued != len(offline):
            self.problems.append(f"client r's store is neither untouched nor wiped after the cut: {rows} rows, "
                                 f"{queued} queued changes (it had {len(offline)})")
        if exit_status == 0:
            self.problems.append("client r's pull exited 0 although its device was revoked")
        # Its next contact: refused, and the steps finish.
        if self.processes.run(self.client(name, "pull", "--query-id", "all"), f"client-{name}") == 0:
            self.problems.append("client r's pull after the cut exited 0 although its device is revoked")
        rows = query(store, "SELECT count(*) FROM todoitem")
        queued = query(store, "SELECT count(*) FROM __operations")
        held = self.escrow_of(device)
        if (rows, queued) != (0, 0):
            self.problems.append(f"client r's store holds {rows} rows and {queued} queued changes after its next "
                                 f"contact, not none")
        if sorted(held) != sorted(offline):
            self.problems.append(f"escrow holds {sorted(held)} for client r, not each of its {len(offline)} offline "
                                 f"changes once")
        status = json.loads(self.processes.output(self.client(name, "status", "--json")))
        if not (status.get("revokedAccess") or {}).get("receiptSent"):
            self.problems.append(f"client r's wipe receipt did not reach the service: {status.get('revokedAccess')}")
        self.escrowed = set(held)
        status, answer = request(self.service.url, "POST", f"/service/api/devices/{device}/restore-access",
                                 admin=True)
        if status != 200:
            self.problems.append(f"restoring client r's access answered {status}: {answer}")

    # Backups and restore (issue 51) ------------------------------------------------------------

    def restore(self):
        """k inserts in, the service stops (shipping its last commits) and `todosync restore --to
        latest` replaces its file from the backup; the cut comes during the restore or just after."""
        k = self.rng.randint(30, 150)
        self.wait_for(f"{k} inserts answered 201", lambda: self.acked() >= k)
        self.held.set()
        self.wait_for("the load to pause", lambda: self.busy == 0)
        self.service.process.terminate()
        self.service.process.wait(DEADLINE)
        with self.lock:
            acked = len(self.acked_inserts)
        before = query(self.service.database, "SELECT count(*) FROM todoitem")
        after = self.rng.random() < 1 / 3
        delay = self.rng.uniform(0, 0.35)  # a debug build restores a few hundred rows in about 0.3 s
        started = time.monotonic()
        restore = self.processes.start(["restore", "--backup-dir", self.service.backup_dir, "--database",
                                        self.service.database, "--to", "latest"], "restore")
        if after:
            restore.wait(DEADLINE)
        else:
            time.sleep(delay)
        confirmed = restore.poll() == 0
        self.restoring = (before, acked, confirmed)
        # The file may be a restored one: a new database for backups, with a new folder.
        self.service.backup_dir = os.path.join(self.disk.path, "backup-after-restore")
        return (f"{(time.monotonic() - started) * 1000:.0f} ms into a restore of {before} rows, "
                + ("after it exited 0" if confirmed else "before it was done"))

    def check_restore(self):
        """After the cut the file is either the old database or the restored one, whole."""
        before, acked, confirmed = self.restoring
        database = self.service.database
        if not self.integrity(database):
            return
        epoch = query(database, "SELECT count(*) FROM __epoch")
        rows = query(database, "SELECT count(*) FROM todoitem")
        if confirmed and not epoch:
            self.problems.append("the restore exited 0, yet the file is the old one after the cut")
        if rows != before:
            self.problems.append(f"the file holds {rows} rows after the cut, not the {before} it had"
                                 + (" (restored)" if epoch else " (the old file)"))

    def check_backup(self):
        """`todosync restore --to latest` of the backup taken until the cut: whole, and holding every
        insert answered before the newest generation's second-newest segment was written (the round
        after it began later, so it shipped those inserts)."""
        backup = self.service.backup_dir
        finished = sorted(name for name in (os.listdir(backup) if os.path.isdir(backup) else [])
                          if os.path.exists(os.path.join(backup, name, "generation.json")))
        if not finished:
            self.problems.append("the backup folder holds no finished generation after the cut")
            return None
        segments = sorted(name for name in os.listdir(os.path.join(backup, finished[-1]))
                          if name.endswith(".segment"))
        shipped_by = int(segments[-2].split("-")[1].split(".")[0]) / 1000 if len(segments) >= 2 else None
        restored = os.path.join(self.folder, "restored-latest.sqlite")
        if self.processes.run(["restore", "--backup-dir", backup, "--database", restored, "--to", "latest"],
                              "restore") != 0:
            self.problems.append("`todosync restore --to latest` of the backup failed after the cut (restore.log)")
            return None
        if not self.integrity(restored):
            return None
        db = sqlite3.connect(restored)
        held = {row[0] for row in db.execute("SELECT id FROM todoitem")}
        db.close()
        with self.lock:
            due = [item_id for item_id in self.acked_inserts
                   if shipped_by is not None and self.acked_at[item_id] < shipped_by]
        lost = [item_id for item_id in due if item_id not in held]
        if lost:
            self.problems.append(f"the backup restored to latest lacks {len(lost)} of the {len(due)} inserts "
                                 f"answered before its last shipped segment, such as {lost[:3]}")
        return f"the backup restored to latest holds {len(held)} rows, every one of the {len(due)} due"

    def cut(self):
        """Every process that writes to the disk is killed, the power goes, PostgreSQL (if any) starts
        again and recovers."""
        self.processes.kill_all()
        if self.cluster:
            self.cluster.kill()
        for thread in self.threads:
            thread.join(DEADLINE)
        self.disk.cut()
        if self.cluster:
            self.cluster.recover()
        self.processes.resume()

    # The checks ----------------------------------------------------------------------------------

    def check(self):
        problems = self.problems
        if self.phase == "restore":
            self.check_restore()
        elif self.backup:
            self.backup_report = self.check_backup()
        self.service.start()
        on_service = self.service.rows()
        lost = [item_id for item_id in self.acked_inserts if item_id not in on_service]
        if lost:
            problems.append(f"the service lost {len(lost)} of {len(self.acked_inserts)} inserts it answered 201 "
                            f"(kept {len(self.acked_inserts) - len(lost)}), such as {lost[:3]}")
        self.check_service_store()
        if self.phase == "migration":
            self.check_migration()
        if self.phase == "revoke":
            self.check_revoke()
        counts = {"on the service": 0, "queued": 0, "lost": 0}
        if self.escrowed:
            counts["in escrow"] = 0
        for name in self.clients:
            store = self.store(name)
            local, queued = set(), set()
            if os.path.exists(store) and self.integrity(store):
                db = sqlite3.connect(store)
                try:
                    local = {row[0] for row in db.execute("SELECT id FROM todoitem")}
                    queued = {row[0] for row in db.execute("SELECT itemId FROM __operations")}
                except sqlite3.Error:
                    pass  # the store's tables were never synced: nothing held
                db.close()
            gone = []
            for item_id in self.acked_adds.get(name, []):
                if item_id in on_service:
                    counts["on the service"] += 1
                elif item_id in local and item_id in queued:
                    counts["queued"] += 1
                elif item_id in self.escrowed:
                    counts["in escrow"] += 1
                else:
                    gone.append(item_id)
            counts["lost"] += len(gone)
            if gone:
                problems.append(f"client {name}: {len(gone)} of {len(self.acked_adds[name])} adds that exited 0 are "
                                f"neither queued in its store nor on the service, such as {gone[:3]}")
        self.converge()
        return counts

    def check_service_store(self):
        """The service's SQLite file passes integrity_check, its PostgreSQL database pg_amcheck."""
        if not self.cluster:
            self.integrity(self.service.database)
        elif complaint := self.cluster.check():
            self.problems.append(f"pg_amcheck of the service's database after the cut: {complaint}")

    def integrity(self, path):
        try:
            db = sqlite3.connect(path)
            verdict = db.execute("PRAGMA integrity_check").fetchone()[0]
            db.close()
        except sqlite3.Error as error:
            verdict = str(error)
        if verdict != "ok":
            self.problems.append(f"{os.path.basename(path)}: integrity_check says {verdict}")
        return verdict == "ok"

    def converge(self):
        """Every client pushes, then every client pulls; then each holds exactly the service's rows."""
        if self.decision:
            self.settle_decision()
        for args in (["push"], ["pull", "--query-id", "all", "--page-size", "200"]):
            for name in self.clients:
                if self.processes.run(self.client(name, *args), f"client-{name}") != 0:
                    self.problems.append(f"client {name}: `{' '.join(args)}` after the cut failed "
                                         f"(client-{name}.log)")
                    return
        service = {item_id: (row.get("text"), row.get("version"))
                   for item_id, row in self.service.rows().items() if not row.get("deleted")}
        if self.decision:
            self.check_decision(service)
        for name in self.clients:
            db = sqlite3.connect(self.store(name))
            local = {row[0]: (row[1], row[2]) for row in db.execute("SELECT id, text, version FROM todoitem")}
            db.close()
            if local != service:
                differing = sorted(set(local.items()) ^ set(service.items()))
                self.problems.append(f"client {name} does not hold the service's rows after push and pull: "
                                     f"{len(differing)} differ, such as {differing[:2]}")
            missing = [item_id for item_id in self.acked_adds.get(name, [])
                       if item_id not in service and item_id not in self.escrowed]
            if missing:
                self.problems.append(f"client {name}: {len(missing)} adds that exited 0 are not on the service "
                                     f"after push and pull, such as {missing[:3]}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=random.randrange(1_000_000))
    parser.add_argument("--store", choices=("sqlite", "postgres"), default="sqlite",
                        help="where the service keeps its tables (both on the power-cut disk)")
    arguments = parser.parse_args()
    seed, postgres = arguments.seed, arguments.store == "postgres"
    replay = f"Tests/PowerCut/power_cut.py --seed {seed}" + (" --store postgres" if postgres else "")
    folder = tempfile.mkdtemp(prefix="todosync-powercut.")
    # Stopped by `timeout`: still kill and unmount (the finally clauses), and say where the logs are.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(f"{replay}: stopped by SIGTERM (logs in {folder})"))
    started, run = time.monotonic(), None
    try:
        with PowerCutMount(folder) as disk, PostgresOnDisk(folder, disk) if postgres else nullcontext() as cluster:
            run = Run(seed, folder, disk, cluster)
            try:
                run.service.start()
                run.load_until_the_moment()
                run.cut()
                counts = run.check()
            finally:
                run.processes.kill_all()
        errors = f", such as {run.insert_errors[0]}" if run.insert_errors else ""
        backup = f"; {run.backup_report}" if run.backup_report else ""
        figures = (f"inserts answered 201: {len(run.acked_inserts)} (errors before the cut: "
                   f"{len(run.insert_errors)}{errors}); adds that exited 0: {sum(map(len, run.acked_adds.values()))} "
                   f"({', '.join(f'{n} {what}' for what, n in counts.items())}){backup}")
    except Exception as error:  # the harness could not finish the run: a failure too
        if run is None:
            raise
        run.problems.append(f"the run stopped: {error}")
        figures = f"inserts answered 201: {len(run.acked_inserts)}"
    print(f"seed {seed}{' on PostgreSQL' if postgres else ''}, power cut {run.moment or run.phase}: {figures}: "
          + ("FAILED" if run.problems else "ok") + f" ({time.monotonic() - started:.1f} s)")
    for problem in run.problems:
        print(f"  {problem}")
    if run.problems:
        print(f"  (logs and the disk in {folder}; replay: {replay})")
    else:
        shutil.rmtree(folder, ignore_errors=True)
    sys.exit(1 if run.problems else 0)


if __name__ == "__main__":
    main()
