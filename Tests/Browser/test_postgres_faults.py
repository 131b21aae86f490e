"""Faults in the middle of a burst of writes against two `todosync serve` instances (A and B) on one
PostgreSQL database, and what every client must hold once it heals:

1. `kill -9` of instance A, which then starts again on the same port;
2. a restart of PostgreSQL (`pg_ctl restart -m immediate`: a crash of the database, then recovery);
3. the instances' listening connections dropped (`pg_terminate_backend` of every backend whose
   last statement was a `LISTEN`: today each instance keeps one, on channel `todosync_changes`,
   fed by the tables' triggers). If a later design has no such connection, the test terminates
   every backend of the service instances instead (all but its own on the test's database), and
   says so in its output: the instances must then heal their pool and their change channel both.

Each test runs, against a fresh database:

- writers: threads that POST new rows (`{"id": <uuid>, "text": ...}`) to A and B alternately,
  recording each id acknowledged (2xx). A failed write is sent again with the same id to the same
  instance until it is answered; a 409 on a retry means an earlier attempt was stored, and counts as
  acknowledged. The last second of the burst writes through A only, so that B's subscribers can
  only learn of those rows through the change channel between instances;
- pullers: one incremental keyset puller through A and one through B (the cursor `(updatedAt, id)`
  of the last row of each page, as Sources/SyncClient/Pull/DeltaToken.swift builds it), pulling
  again and again, retrying on errors;
- live subscribers: long polls of `GET /tables/todoitem/$changes?cursor=C&timeout=30`, two through
  B and one through A; each pulls (keyset, as above) only when woken (200) and subscribes again with
  the cursor it was given; after an error it subscribes again with the cursor it had, without
  pulling (the service answers at once when rows past it landed meanwhile).

Once the fault healed (writes going on), every id acknowledged so far must be in the database (read
with psql) and the pullers must catch up with them, holding no id the database lacks. After the
burst, with no further writes, every acknowledged id must be in the database, every puller must hold
every acknowledged id and no id the database lacks, and every live subscriber must hold every
acknowledged id within SUBSCRIBER_DEADLINE seconds, well under the long polls' 30 s: a subscriber
that was not woken fails the test. Conditions are polled with deadlines, and a failure says what is
missing, where the missing rows stand in the table and where each reader's last pages ended.

An instance that crashes fails the test at once, with the crash from its log. A crash that matches a
known bug (KNOWN_CRASHES) makes the test an expected failure (xfail) naming the bug instead (none today;
an instance used to crash in postgres-nio's connection pool after PostgreSQL restarted).

The tests start their own throwaway PostgreSQL cluster (scripts/postgres-cluster.sh; they restart it
and terminate its backends), with `synchronous_commit=on` so that an acknowledged write survives
PostgreSQL's crash. Each prints what it measured (`-s` shows it): how long the fault lasted, when
B's subscribers were first woken after it, and how long everyone took to converge.
"""
import collections
import datetime
import glob
import http.client
import json
import os
import random
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import pytest

import fault_campaign
from fault_campaign import RESOURCES, ROOT, Process

CLUSTER_SCRIPT = os.path.join(ROOT, "scripts", "postgres-cluster.sh")
TABLE = "todoitem"
HEADERS = {"ZUMO-API-VERSION": "2.0.0"}
PAGE = 50
WRITERS = 4
# The burst: BEFORE_FAULT seconds of writes, the fault and its healing, AFTER_HEAL seconds of
# writes to A and B, then TAIL seconds of writes to A only.
BEFORE_FAULT, AFTER_HEAL, TAIL = 3.0, 2.0, 1.0
# After the burst, with no writes: how long the live subscribers (long polls of 30 s) and the pullers
# (which poll) may take to hold every acknowledged id.
SUBSCRIBER_DEADLINE = 10.0
PULLER_DEADLINE = 20.0
# How long a fault may take to heal (an instance to start, PostgreSQL to restart, the listening
# connections to come back); a loaded machine is slow.
HEAL_DEADLINE = 30.0

# How PostgreSQL stops before it starts again (pg_ctl's mode): immediate is a crash of the database,
# fast a clean shutdown that still closes every connection.
RESTART_MODE = os.environ.get("TODOSYNC_PG_RESTART_MODE", "immediate")

# Crashes of the instances that are known bugs: a test that meets one is an expected failure (xfail)
# that names it, and passes again once the bug is fixed; any other exit of an instance fails.
KNOWN_CRASHES = {
    # None today. (Found by this file: with every pooled connection a minimum one, postgres-nio's pool
    # crashed an instance after PostgreSQL restarted; see PostgresTableStore.init.)
}

# What a crashing Swift program prints (its backtrace follows, for seconds, before it exits).
CRASH = re.compile(r"Fatal error|Precondition failed|Assertion failed|Program crashed")

pytestmark = pytest.mark.skipif(
    not glob.glob("/usr/lib/postgresql/*/bin/initdb"),
    reason="needs PostgreSQL's server binaries (scripts/install-deps.sh test installs them)")


# ---------------------------------------------------------------------------------------------
# The cluster, the instances and the database


class Cluster:
    """A throwaway PostgreSQL cluster of scripts/postgres-cluster.sh."""

    def __init__(self):
        # Its folder directly (not inside another): as root, the `postgres` user must reach it.
        self.dir = tempfile.mkdtemp(prefix="todosync-pg-faults-")
        environment = dict(os.environ, POSTGRES_OPTIONS="-c synchronous_commit=on")
        self.url = subprocess.run([CLUSTER_SCRIPT, "start", self.dir], check=True, capture_output=True, text=True,
                                  env=environment, timeout=120).stdout.strip()
        self.port = self.url.split("@127.0.0.1:", 1)[1].split("/", 1)[0]

    def restart(self, mode):
        subprocess.run([CLUSTER_SCRIPT, "restart", self.dir, mode], check=True, capture_output=True, timeout=120)

    def stop(self):
        subprocess.run([CLUSTER_SCRIPT, "stop", self.dir], capture_output=True, timeout=120)

    def psql(self, database, sql, timeout=20):
        """The rows `sql` gives (each a list of its columns' texts)."""
        answer = subprocess.run(
            ["psql", "-h", "127.0.0.1", "-p", self.port, "-U", "todosync", "-d", database, "-AtXq",
             "-F", "\t", "-c", sql], capture_output=True, text=True, timeout=timeout)
        if answer.returncode != 0:
            raise RuntimeError("psql: %s" % answer.stderr.strip())
        return [line.split("\t") for line in answer.stdout.splitlines() if line]


@pytest.fixture(scope="module")
def cluster():
    cluster = Cluster()
    # The instances run a copy of the binary (a build in the meantime must not make a restart
    # fail), through fault_campaign's Process, which starts `Process.binary`.
    folder = tempfile.mkdtemp(prefix="todosync-pg-faults-bin-")
    binary, Process.binary = Process.binary, os.path.join(folder, "todosync")
    shutil.copy2(fault_campaign.BIN, Process.binary)
    yield cluster
    Process.binary = binary
    shutil.rmtree(folder, ignore_errors=True)
    cluster.stop()


class Pair:
    """Two `todosync serve` instances on one fresh database of the cluster."""

    def __init__(self, cluster, folder):
        self.cluster, self.folder = cluster, folder
        url = fault_campaign.fresh_database(cluster.url)
        self.database = url.rsplit("/", 1)[1].split("?", 1)[0]
        self.stops = []  # the clients' stop events, set when the test ends whatever happened
        self.instances = [Process(folder, "serve-%s" % name, ["serve", "--port", "0", "--database", url, "--quiet"]
                                  + RESOURCES) for name in ("A", "B")]
        for instance in self.instances:
            instance.keep_port()  # A starts again on its port: the clients keep its address
        self.a, self.b = (instance.url for instance in self.instances)

    def restart_a(self):
        """SIGKILL of A, and A again on its port (which may take a moment to be free)."""
        instance = self.instances[0]
        instance.kill()
        deadline = time.monotonic() + HEAL_DEADLINE
        while True:
            try:
                instance.start()
                return
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def check_alive(self):
        """Fails at once when an instance crashed (its log says so: it may take seconds to print its
        backtrace before it exits) or exited (none is stopped but A, by `restart_a`, which starts it
        again before anything waits). A crash that matches a known bug (KNOWN_CRASHES) is reported
        as an expected failure that names it; any other is a failure."""
        for name, instance in zip("AB", self.instances):
            status = instance.process.poll()
            with open(instance.log_path, errors="replace") as log:
                output = log.read()
            lines = [line for line in output.splitlines() if CRASH.search(line)]
            if status is None and not lines:
                continue
            why = "instance %s (%s) %s during the test: %s; its log: %s" % (
                name, instance.url, "crashed" if status is None else "exited with status %s" % status,
                " / ".join(lines[:3]) or "(no crash in its log)", instance.log_path)
            for signature, bug in KNOWN_CRASHES.items():
                if signature in output:
                    pytest.xfail("known bug, %s: %s" % (bug, why))
            pytest.fail(why)

    def ids(self):
        """Every id in the table, read by psql."""
        return {row[0] for row in self.cluster.psql(self.database, 'SELECT "id" FROM "%s"' % TABLE)}

    def stamps(self, ids):
        """`id updatedAt(ms) xmin` of the rows `ids` and of the rows stamped just before and after
        each, in stamp order, for a failure's message."""
        listed = ",".join("'%s'" % row.replace("'", "''") for row in ids)
        try:
            rows = self.cluster.psql(self.database, (
                'WITH ordered AS (SELECT "id", "updatedAt", xmin, lag("id") OVER w AS before, lead("id") OVER w AS '
                'later FROM "%s" WINDOW w AS (ORDER BY "updatedAt", "id")) SELECT "id", "updatedAt", xmin FROM '
                'ordered WHERE "id" IN (%s) OR before IN (%s) OR later IN (%s) ORDER BY "updatedAt", "id"')
                % (TABLE, listed, listed, listed))
        except (RuntimeError, subprocess.TimeoutExpired) as error:
            return str(error)
        return "\n".join("    %s %s %s xmin %s" % ("MISSING" if row[0] in ids else "       ", row[1], row[0], row[2])
                         for row in rows)

    def backends(self, listening):
        """The instances' backends on the database (pid, last statement): those whose last statement
        was a LISTEN, or all of them. A connection that listens sends nothing more, so its last
        statement stays the LISTEN (`pg_listening_channels()` tells only of one's own session)."""
        condition = r"AND query ~* '^\s*LISTEN\s'" if listening else ""
        return self.cluster.psql(self.database, (
            "SELECT pid, query FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND backend_type = 'client backend' %s ORDER BY pid") % condition)

    def terminate(self, pids):
        if pids:
            self.cluster.psql(self.database, "SELECT pg_terminate_backend(pid) FROM unnest(ARRAY[%s]) AS pid"
                              % ",".join(str(int(pid)) for pid in pids))

    def logs(self):
        """The end of each instance's log, for a failure's message."""
        text = []
        for instance in self.instances:
            with open(instance.log_path, errors="replace") as log:
                text.append("--- %s (%s) ---\n%s" % (instance.log_path, instance.url, log.read()[-3000:]))
        return "\n".join(text)

    def stop(self):
        for event in self.stops:
            event.set()
        for instance in self.instances:
            instance.kill()


@pytest.fixture
def pair(cluster, tmp_path):
    pair = Pair(cluster, str(tmp_path))
    yield pair
    pair.stop()


# ---------------------------------------------------------------------------------------------
# HTTP


def call(method, url, body=None, timeout=10):
    """(status, JSON body or None) of a request; an HTTP error status is an answer too. Raises
    OSError (refused, reset, timed out) when there was no answer."""
    data = None if body is None else json.dumps(body).encode()
    headers = dict(HEADERS, **({"Content-Type": "application/json"} if data is not None else {}))
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            text = answer.read()
            return answer.status, json.loads(text) if text else None
    except (http.client.HTTPException, ValueError) as error:  # cut short (an instance killed mid-answer)
        raise ConnectionError("%s: %s" % (type(error).__name__, error)) from error
    except urllib.error.HTTPError as error:
        try:
            text = error.read()
        except OSError:
            text = b""
        try:
            return error.code, json.loads(text) if text else None
        except ValueError:
            return error.code, None


def keyset_url(base, cursor):
    """The next page after `cursor` (`(updatedAt, id)` of the last row seen, or None)."""
    query = "$orderby=updatedAt,id&$top=%d&__includeDeleted=true" % PAGE
    if cursor:
        stamp, last = "datetimeoffset'%s'" % cursor[0], "'%s'" % cursor[1].replace("'", "''")
        odata = "(updatedAt gt %s) or (updatedAt eq %s and id gt %s)" % (stamp, stamp, last)
        query += "&$filter=" + urllib.parse.quote(odata, safe="")
    return "%s/tables/%s?%s" % (base, TABLE, query)


# ---------------------------------------------------------------------------------------------
# The clients


class Writers:
    """WRITERS threads writing new rows to A and B alternately (to A only once `tail` is set),
    each failed write sent again with its id until it is answered."""

    def __init__(self, pair):
        self.pair = pair
        self.acked = {}          # id -> (instance name, monotonic time of the answer, attempts)
        self.errors = {}         # what failed -> how often
        self.anomalies = []      # answers that must not happen
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.tail = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(n,), daemon=True) for n in range(WRITERS)]
        for thread in self.threads:
            thread.start()

    def count(self):
        with self.lock:
            return len(self.acked)

    def snapshot(self):
        with self.lock:
            return dict(self.acked)

    def error(self, what):
        with self.lock:
            self.errors[what] = self.errors.get(what, 0) + 1

    def run(self, index):
        rng = random.Random(index)
        sent = index
        while not self.stop.is_set():
            name = "A" if self.tail.is_set() or sent % 2 == 0 else "B"
            sent += 1
            self.write(name, str(uuid.uuid4()))
            time.sleep(rng.uniform(0.01, 0.03))

    def write(self, name, row):
        url = (self.pair.a if name == "A" else self.pair.b) + "/tables/" + TABLE
        attempts, give_up = 0, time.monotonic() + 60
        while time.monotonic() < give_up:
            attempts += 1
            try:
                status, body = call("POST", url, {"id": row, "text": "burst via %s" % name})
            except OSError as error:
                self.error("%s: %s" % (name, type(error).__name__))
                time.sleep(0.1)
                continue
            if 200 <= status < 300 or (status == 409 and attempts > 1):
                with self.lock:
                    self.acked[row] = (name, time.monotonic(), attempts)
                return
            if status == 409:
                with self.lock:
                    self.anomalies.append("a new id %s was refused with 409 by %s: %s" % (row, name, body))
                return
            self.error("%s: %d" % (name, status))
            time.sleep(0.1)
        with self.lock:
            self.anomalies.append("%s was never answered by %s in 60 s (%d attempts)" % (row, name, attempts))

    def finish(self):
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=90)
        assert not any(thread.is_alive() for thread in self.threads), "a writer is stuck"


class Reader(threading.Thread):
    """A keyset puller through one instance; `held` is every id it pulled."""

    def __init__(self, name, base):
        super().__init__(daemon=True)
        self.name_, self.base = name, base
        self.cursor = None
        self.held = set()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.errors = 0
        self.anomalies = []
        self.pages = collections.deque(maxlen=40)  # (monotonic time, rows, cursor after the page)

    def holds(self):
        with self.lock:
            return set(self.held)

    def pull(self):
        """Pages until one is not full; raises OSError or RuntimeError when one fails."""
        while True:
            status, page = call("GET", keyset_url(self.base, self.cursor))
            if status != 200 or not isinstance(page, list):
                raise RuntimeError("pull answered %s" % status)
            for row in page:
                key = (row["updatedAt"], row["id"])
                if self.cursor and not after(key, self.cursor):
                    self.anomalies.append("%s: row %s is not past the cursor %s" % (self.name_, key, self.cursor))
                self.cursor = key
            with self.lock:
                self.held.update(row["id"] for row in page)
            at = self.cursor and (milliseconds(self.cursor[0]), self.cursor[1])
            self.pages.append((time.monotonic(), len(page), at))
            if len(page) < PAGE:
                return

    def pull_until_done(self):
        while not self.stop.is_set():
            try:
                self.pull()
                return
            except (OSError, RuntimeError, ValueError):
                self.errors += 1
                time.sleep(0.2)


def after(key, cursor):
    """Whether `(updatedAt, id)` comes after `cursor` (updatedAt: ISO 8601 text)."""
    return (milliseconds(key[0]), key[1]) > (milliseconds(cursor[0]), cursor[1])


def milliseconds(text):
    """An ISO 8601 instant as milliseconds since 1970 (the table's `updatedAt` column)."""
    return round(datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


class Puller(Reader):
    """Pulls again and again, a moment apart."""

    def run(self):
        while not self.stop.is_set():
            self.pull_until_done()
            time.sleep(0.1)


class Subscriber(Reader):
    """A live subscriber: a long poll of `$changes`; pulls only when woken (200)."""

    def __init__(self, name, base):
        super().__init__(name, base)
        self.changes = "%s/tables/%s/$changes" % (base, TABLE)
        self.wakes = []       # monotonic times of the 200 answers
        self.timeouts = 0     # 204 answers
        self.channel_errors = []
        self.position = None  # the change cursor it waits past

    def run(self):
        while self.position is None and not self.stop.is_set():
            try:
                status, body = call("GET", self.changes)
                if status == 200:
                    self.position = body["cursor"]
                    break
                self.channel_errors.append("subscribing without a cursor answered %s: %s" % (status, body))
            except OSError as error:
                self.channel_errors.append("subscribing: %s" % error)
            time.sleep(0.2)
        self.pull_until_done()  # its first pull, from the start
        while not self.stop.is_set():
            url = "%s?cursor=%s&timeout=30" % (self.changes, urllib.parse.quote(self.position, safe=""))
            try:
                status, body = call("GET", url, timeout=45)
            except OSError as error:
                self.channel_errors.append("%.1f %s" % (time.monotonic(), error))
                time.sleep(0.2)
                continue
            if status == 200:
                self.wakes.append(time.monotonic())
                self.position = body["cursor"]
                self.pull_until_done()
            elif status == 204:
                self.timeouts += 1
            else:
                self.channel_errors.append("%.1f answered %s: %s" % (time.monotonic(), status, body))
                time.sleep(0.2)

    def first_wake_after(self, moment):
        return next((wake - moment for wake in list(self.wakes) if wake >= moment), None)

    def longest_quiet(self, start, end):
        """The longest time without a wake between `start` and `end`."""
        moments = [start] + [w for w in list(self.wakes) if start < w < end] + [end]
        return max(b - a for a, b in zip(moments, moments[1:]))


# ---------------------------------------------------------------------------------------------
# Waiting and judging


def wait_for(what, check, deadline, pair):
    """Polls `check()` (None when satisfied, else what is missing) until it is satisfied or
    `deadline` seconds pass; returns the seconds it took. Fails with what is still missing, or at
    once when an instance of `pair` exited."""
    start = time.monotonic()
    while True:
        pair.check_alive()
        missing = check()
        if missing is None:
            return time.monotonic() - start
        if time.monotonic() - start > deadline:
            pair.check_alive()
            pytest.fail("%s: not within %.0f s: %s" % (what, deadline, missing))
        time.sleep(0.1)


def missing_from(held, wanted, acked=None):
    """None when `held` has every id of `wanted`, else a description of the missing ones."""
    missing = set(wanted) - held
    if not missing:
        return None
    sample = sorted(missing)[:5]
    if acked:
        sample = ["%s (acknowledged by %s, attempt %d)" % (row, acked[row][0], acked[row][2]) for row in sample]
    return "%d of %d missing, e.g. %s" % (len(missing), len(wanted), sample)


def converge(what, readers, acked, start, deadline, pair):
    """Polls until every reader holds every acknowledged id, or `deadline` seconds after `start`
    (then fails, naming what each lacks, where those rows stand in the table and where the reader's
    last pages ended); returns when each first held them all, from `start`."""
    done = {}
    while True:
        pair.check_alive()
        for reader in readers:
            if reader.name_ not in done and missing_from(reader.holds(), acked) is None:
                done[reader.name_] = time.monotonic() - start
        if len(done) == len(readers):
            return done
        if time.monotonic() - start > deadline:
            pair.check_alive()
            lacking = [reader for reader in readers if reader.name_ not in done]
            details = []
            for reader in lacking:
                missing = set(acked) - reader.holds()
                details.append("%s: %s\n  the missing rows (updatedAt in ms) among their neighbours:\n%s\n"
                               "  its last pages (time from the start, rows, cursor after it):\n%s" % (
                                   reader.name_, missing_from(reader.holds(), acked, acked),
                                   pair.stamps(sorted(missing)[:10]), "\n".join(
                                       "    %+.2f s %d %s" % (moment - start, rows, cursor)
                                       for moment, rows, cursor in list(reader.pages)[-12:])))
            pytest.fail("%s: not within %.0f s:\n%s" % (what, deadline, "\n".join(details)))
        time.sleep(0.05)


class Burst:
    """A pair of instances with writers, pullers and live subscribers around a fault."""

    def __init__(self, pair):
        self.pair = pair
        status, _ = call("POST", pair.a + "/tables/" + TABLE, {"id": "seed", "text": "the table's first row"})
        assert status == 201, "the seed row was answered %s" % status
        self.pullers = [Puller("puller via A", pair.a), Puller("puller via B", pair.b)]
        self.subscribers = [Subscriber("subscriber 1 via B", pair.b), Subscriber("subscriber 2 via B", pair.b),
                            Subscriber("subscriber via A", pair.a)]
        for reader in self.pullers + self.subscribers:
            pair.stops.append(reader.stop)
            reader.start()
        wait_for("the subscribers' first pull", lambda: next(
            ("%s holds %d rows" % (s.name_, len(s.holds())) for s in self.subscribers if "seed" not in s.holds()),
            None), HEAL_DEADLINE, pair)
        self.started = time.monotonic()
        self.writers = Writers(pair)
        pair.stops.append(self.writers.stop)
        self.report = {}

    def __enter__(self):
        return self

    def __exit__(self, kind, error, trace):
        """On a failure, what each client holds and the instances' logs; a failure while an instance
        crashed is reported as that crash (`Pair.check_alive`)."""
        for reader in self.pullers + self.subscribers:
            reader.stop.set()
        self.writers.stop.set()
        if kind is not None:
            print(self.describe(time.monotonic()))
            print(self.pair.logs())
            if not isinstance(error, pytest.xfail.Exception):
                self.pair.check_alive()

    def until_fault(self):
        """Writes go on for BEFORE_FAULT seconds (and at least some were acknowledged)."""
        time.sleep(BEFORE_FAULT)
        wait_for("acknowledged writes before the fault",
                 lambda: None if self.writers.count() >= 20 else "%d acknowledged" % self.writers.count(),
                 HEAL_DEADLINE, self.pair)
        self.fault = time.monotonic()
        self.acked_before = self.writers.count()

    def healed(self):
        """After the fault healed: every write acknowledged so far is in the database."""
        self.heal = time.monotonic()
        self.report["fault lasted"] = "%.2f s" % (self.heal - self.fault)
        acked = self.writers.snapshot()
        acked["seed"] = ("A", self.started, 1)
        wait_for("the writes acknowledged before the fault healed, in the database",
                 lambda: missing_from(self.ids(), acked, acked), HEAL_DEADLINE, self.pair)
        # The pullers, which keep pulling through the fault, catch up with them (writes go on).
        self.report["pullers caught up with the writes acknowledged before the fault healed in"] = "%.2f s" % max(
            converge("every puller holding the writes acknowledged before the fault healed", self.pullers, acked,
                     time.monotonic(), PULLER_DEADLINE, self.pair).values())
        # What the pullers hold first, then the database: writes go on, and a row pulled after the
        # database was read is not missing from it (this order once failed so, falsely).
        held = {puller.name_: puller.holds() for puller in self.pullers}
        database = self.pair.ids()
        for name, ids in held.items():
            extra = ids - database
            assert not extra, "%s holds %d ids the database lacks, e.g. %s" % (name, len(extra), sorted(extra)[:5])

    def ids(self):
        try:
            return self.pair.ids()
        except (RuntimeError, subprocess.TimeoutExpired):
            return set()

    def finish(self):
        """The rest of the burst, then the judgement."""
        time.sleep(AFTER_HEAL)
        self.writers.tail.set()
        self.tail = time.monotonic()
        time.sleep(TAIL)
        self.writers.finish()
        end = time.monotonic()
        acked = self.writers.snapshot()
        acked["seed"] = ("A", self.started, 1)
        # The subscribers first: their deadline runs from the end of the burst.
        timings = converge("every live subscriber holding every acknowledged id (no writes since the burst)",
                           self.subscribers, acked, end, SUBSCRIBER_DEADLINE, self.pair)
        timings.update(converge("every puller holding every acknowledged id", self.pullers, acked, end,
                                PULLER_DEADLINE, self.pair))
        wait_for("every acknowledged write in the database", lambda: missing_from(self.ids(), acked, acked),
                 HEAL_DEADLINE, self.pair)
        database = self.pair.ids()  # read after the readers': rows are only added
        for reader in self.pullers + self.subscribers:
            extra = reader.holds() - database
            assert not extra, "%s holds %d ids the database lacks, e.g. %s" % (
                reader.name_, len(extra), sorted(extra)[:5])
            assert not reader.anomalies, reader.anomalies[:5]
        assert not self.writers.anomalies, self.writers.anomalies[:5]
        after_heal = [a for a in acked.values() if a[1] > self.heal]
        assert any(a[0] == "A" for a in after_heal) and any(a[0] == "B" for a in after_heal), (
            "no writes acknowledged by both instances after the fault healed")
        self.report.update({
            "acknowledged": "%d (%d before the fault, %d after it healed)" % (
                len(acked), self.acked_before, len([a for a in acked.values() if a[1] > self.heal])),
            "rows in the database": len(database),
            "retried writes": sum(1 for a in acked.values() if a[2] > 1),
            "write errors": dict(sorted(self.writers.errors.items())),
            "after the burst, each held every acknowledged id in": {
                name: "%.2f s" % seconds for name, seconds in timings.items()},
        })
        for subscriber in self.subscribers:
            def first(moment):
                seconds = subscriber.first_wake_after(moment)
                return "never" if seconds is None else "%.2f s" % seconds
            self.report[subscriber.name_] = (
                "first woken %s after the fault, %s after it healed, %s after the writes went to A only; "
                "longest without a wake from the fault to the end of the burst %.2f s; %d wakes, %d timeouts "
                "(204), %d channel errors" % (
                    first(self.fault), first(self.heal), first(self.tail), subscriber.longest_quiet(self.fault, end),
                    len(subscriber.wakes), subscriber.timeouts, len(subscriber.channel_errors)))
        return self.report

    def describe(self, end):
        lines = ["burst: %d acknowledged; write errors %s; anomalies %s" % (
            self.writers.count(), self.writers.errors, self.writers.anomalies[:5])]
        for reader in self.pullers + self.subscribers:
            line = "%s: holds %d, cursor %s, %d pull errors" % (
                reader.name_, len(reader.holds()), reader.cursor, reader.errors)
            if isinstance(reader, Subscriber):
                line += "; position %s, %d wakes (last %.2f s before the end), %d timeouts, channel errors %s" % (
                    reader.position, len(reader.wakes), end - reader.wakes[-1] if reader.wakes else float("nan"),
                    reader.timeouts, reader.channel_errors[-5:])
            lines.append(line)
        return "\n".join(lines)


def show(test, report):
    print("\n%s:" % test)
    for key, value in report.items():
        print("  %s: %s" % (key, value))


# ---------------------------------------------------------------------------------------------
# The tests


def test_kill_9_of_an_instance_mid_burst(pair):
    with Burst(pair) as burst:
        burst.until_fault()
        pair.instances[0].signal(signal.SIGKILL)
        pair.restart_a()
        burst.healed()
        show("kill -9 of A, then A again on its port", burst.finish())


def test_postgres_restart_mid_burst(pair):
    with Burst(pair) as burst:
        before = listeners(pair)
        burst.until_fault()
        pair.cluster.restart(RESTART_MODE)
        burst.report["PostgreSQL restart (%s) took" % RESTART_MODE] = "%.2f s" % (time.monotonic() - burst.fault)
        if before:
            # Healed once both instances listen again (their connections died with the server).
            burst.report["then both instances listened again in"] = "%.2f s" % wait_for(
                "both instances listening again", lambda: listening_again(pair, before), HEAL_DEADLINE, pair)
        burst.healed()
        show("PostgreSQL restarted (-m %s)" % RESTART_MODE, burst.finish())


def test_listening_connections_dropped_mid_burst(pair):
    with Burst(pair) as burst:
        listeners(pair)
        burst.until_fault()
        listening = pair.backends(listening=True)
        if listening:
            victims, what = listening, "the LISTEN connections"
        else:
            # No connection listens (a design without LISTEN): every backend of the instances goes.
            victims, what = pair.backends(listening=False), "every backend of the instances (none LISTENs)"
            print("no backend LISTENs; terminating %s" % what)
        assert victims, "the instances have no backends on the database"
        pair.terminate([pid for pid, _ in victims])
        burst.report["terminated"] = "%s: %s" % (what, ["%s %s" % (pid, query[:60]) for pid, query in victims])
        if listening:
            burst.report["both instances listened again in"] = "%.2f s" % wait_for(
                "both instances listening again", lambda: listening_again(pair, {pid for pid, _ in listening}),
                HEAL_DEADLINE, pair)
        burst.healed()
        show("the listening connections terminated", burst.finish())


def listeners(pair, deadline=5.0):
    """The pids of the backends that LISTEN once there are two (one per instance), or what there
    is after `deadline` seconds (none: a design without LISTEN)."""
    until = time.monotonic() + deadline
    while True:
        pids = {pid for pid, _ in pair.backends(listening=True)}
        if len(pids) >= 2 or time.monotonic() > until:
            return pids
        time.sleep(0.1)


def listening_again(pair, old):
    """None once as many backends as `old`, none of them in it, LISTEN; else what listens now."""
    try:
        now = pair.backends(listening=True)
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        return str(error)
    fresh = [pid for pid, _ in now if pid not in old]
    return None if len(fresh) >= len(old) else "listening now: %s" % now
