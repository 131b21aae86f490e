#!/usr/bin/env python3
"""The fleet (docs/fleet.md) under load: a simulated fleet of devices against one `todosync serve`,
and what tracking them costs. Standard library only (asyncio, a small HTTP/1.1 client on raw
sockets, keep-alive connections).

    Benchmarks/fleet-bench.py [--binary .build/release/todosync] [--devices 1000] [--duration 600]
                              [--pull-period 30] [--stalled-after 120] [--behind-after 60] [--quick]

Each part runs on a `todosync serve` of its own (release binary, a SQLite file in a temporary
folder, `--admin-key`, `--stalled-after`, `--behind-after`, `--quiet`), all in one run:

  (a) durable inserts (POST /tables/todoitem) from 16 keep-alive connections with
      `X-ZUMO-INSTALLATION-ID` (spread over 1,000 ids) against the same without the header (no
      device to track), in alternating rounds (with, without, without, with) after a warm-up;
      prints both rates and their ratio (target ≥ 0.97);
  (c) the `/service/devices` page's p50 with 100 devices known and with 10,000 (each made by one
      cheap pull of its own, on a table of 1,000 rows); prints both and their ratio (target ≤ 2);
  the fleet: DEVICES devices for DURATION seconds, each on its own schedule (one tick per pull
      period, at a random offset):
      - most advance: each tick pulls its table incrementally (`$filter` with a bound on
        `updatedAt`: half of them the todosync keyset form, half `updatedAt gt T`; pages of 50
        until a short page), moving its bound to the last row received; a fifth of them also
        insert one row per tick;
      - idle ones pull once, then send nothing;
      - lossy ones abandon a fraction of their requests (the connection is closed before the
        answer is read) and ask again from the same bound at the next tick; never so many that
        the rule would rightly call them stalled (a loss is skipped when the next ask from the
        same bound would come stalled-after, less half a second, after the first ask from it);
      - exactly one, the frozen device, advances until a quarter of the run, then asks from the
        same bound at every tick while the head moves on.
      `GET /service/api/devices?state=stalled` (admin key) is polled throughout; prints when the
      frozen device was flagged relative to the moment it froze (its first request from the
      frozen bound; target ≤ stalled-after + one pull period, measured to within the poll
      interval) and every other device ever reported stalled (by the polls or
      `/service/api/alerts`; target none), as PASS/FAIL lines;
  (b) over the fleet phase: the tracking's database writes per second, from `/metrics`'s
      `todosync_fleet_saves_total` (flush transactions; target ≤ 1 per second).

`--quick` (50 devices, 40 s, stalled-after 5, behind-after 5, pull period 2, short insert rounds)
finishes in about a minute. The exit status is 1 when a PASS/FAIL line says FAIL."""
import argparse
import asyncio
import collections
import http.cookiejar
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime
from html.parser import HTMLParser

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ADMIN_KEY = "fleet-bench-admin-key-8c1f0e"
TABLE = "todoitem"
EPOCH = "1970-01-01T00:00:00.000Z"
PAGE_TOP = 50
MAX_PAGES_PER_TICK = 20
PROTOCOL_HEADERS = [("ZUMO-API-VERSION", "2.0.0")]
STATES = ("healthy", "behind", "stalled", "offline", "old-shape")


# --- A small HTTP/1.1 client over asyncio streams ----------------------------------------------

class NothingReceived(ConnectionError):
    """The connection ended before any byte of the answer (a kept-alive connection the service
    closed meanwhile): the request may be sent again on a new connection."""


class Answer:
    __slots__ = ("status", "headers", "body")

    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)


class Connection:
    """One keep-alive connection, opened when first needed and again after the service closed it."""

    def __init__(self, host, port, timeout=60):
        self.host, self.port, self.timeout = host, port, timeout
        self.reader = self.writer = None
        self.last_used = 0.0
        self.opened = 0

    @property
    def is_open(self):
        return self.writer is not None

    async def _open(self):
        self.reader, self.writer = await asyncio.wait_for(
            asyncio.open_connection(self.host, self.port, limit=1 << 20), self.timeout)
        self.opened += 1

    def close(self):
        if self.writer is not None:
            try:
                self.writer.close()
            except Exception:
                pass
        self.reader = self.writer = None

    def _bytes(self, method, target, headers, body):
        lines = ["%s %s HTTP/1.1" % (method, target), "Host: %s:%d" % (self.host, self.port)]
        for name, value in headers:
            lines.append("%s: %s" % (name, value))
        if body is not None:
            lines.append("Content-Length: %d" % len(body))
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b"")

    async def request(self, method, target, headers=(), body=None):
        """Sends the request and reads its answer. A request on a reused connection that the
        service had closed (nothing came back) is sent once more on a new one."""
        data = self._bytes(method, target, headers, body)
        for attempt in (0, 1):
            reused = self.is_open
            if not reused:
                await self._open()
            try:
                self.writer.write(data)
                await self.writer.drain()
                answer = await asyncio.wait_for(self._read(method), self.timeout)
                self.last_used = time.monotonic()
                return answer
            except (NothingReceived, ConnectionResetError, BrokenPipeError) as error:
                self.close()
                if reused and attempt == 0:
                    continue
                raise
            except BaseException:
                self.close()
                raise

    async def abandon(self, method, target, headers=(), body=None):
        """Sends the request, then closes the connection without reading the answer."""
        if not self.is_open:
            await self._open()
        try:
            self.writer.write(self._bytes(method, target, headers, body))
            await self.writer.drain()
        finally:
            self.close()

    async def _read(self, method):
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as error:
            if not error.partial:
                raise NothingReceived("the connection was closed before the answer") from None
            raise ConnectionError("the answer was cut off in its head") from None
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            body = b""
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            parts = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
                if size == 0:
                    while (await self.reader.readuntil(b"\r\n")) != b"\r\n":
                        pass
                    break
                parts.append((await self.reader.readexactly(size + 2))[:-2])
            body = b"".join(parts)
        elif "content-length" in headers:
            body = await self.reader.readexactly(int(headers["content-length"]))
        else:
            body = await self.reader.read()
            self.close()
            return Answer(status, headers, body)
        if headers.get("connection", "").lower() == "close":
            self.close()
        return Answer(status, headers, body)


# --- The service ---------------------------------------------------------------------------------

class Service:
    """`todosync serve` on a free port, a SQLite file in `folder`; a thread keeps its output."""

    def __init__(self, binary, folder, name, stalled_after, behind_after):
        self.name = name
        database = os.path.join(folder, name + ".sqlite")
        self.args = [binary, "serve", "--port", "0", "--database", database, "--admin-key", ADMIN_KEY,
                     "--stalled-after", str(stalled_after), "--behind-after", str(behind_after), "--quiet"]
        self.process = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        start_new_session=True)
        self.lines = collections.deque(maxlen=200)
        self.found = threading.Event()
        self.url = None
        threading.Thread(target=self._read, daemon=True).start()
        if not self.found.wait(90) or self.url is None:
            self.stop()
            raise SystemExit("todosync serve (%s) did not announce its address:\n%s" % (name, "".join(self.lines)))
        parsed = urllib.parse.urlsplit(self.url)
        self.host, self.port = parsed.hostname, parsed.port

    def _read(self):
        for line in self.process.stdout:
            self.lines.append(line)
            match = re.search(r"(https?://127\.0\.0\.1:\d+)", line)
            if match and self.url is None:
                self.url = match.group(1)
                self.found.set()
        self.found.set()

    def cpu_seconds(self):
        try:
            with open("/proc/%d/stat" % self.process.pid) as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return float("nan")

    def stop(self):
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)
            except ProcessLookupError:
                pass

    def died(self):
        """Why the service is gone (its exit status and last output), or None while it runs."""
        status = self.process.poll()
        if status is None:
            return None
        return "todosync serve (%s) exited with status %d; its last output:\n%s" % (
            self.name, status, "".join(list(self.lines)[-40:]))

    def connection(self, timeout=60):
        return Connection(self.host, self.port, timeout)


ADMIN_HEADERS = [("Authorization", "Bearer " + ADMIN_KEY), ("Accept", "application/json")]


async def admin_json(connection, path):
    answer = await connection.request("GET", path, ADMIN_HEADERS)
    if answer.status != 200:
        raise RuntimeError("GET %s answered %d: %s" % (path, answer.status, answer.body[:300]))
    return answer.json()


async def metrics(connection):
    """`/metrics` as {sample name: summed value} (every label set added up)."""
    answer = await connection.request("GET", "/metrics", ADMIN_HEADERS[:1])
    if answer.status != 200:
        raise RuntimeError("GET /metrics answered %d" % answer.status)
    values = collections.defaultdict(float)
    for line in answer.body.decode().splitlines():
        if not line or line.startswith("#"):
            continue
        match = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)", line)
        if match:
            try:
                values[match.group(1)] += float(match.group(3))
            except ValueError:
                pass
    return values


async def known_devices(connection):
    """How many devices the service knows: `/metrics`'s `todosync_devices` (every state), else the
    API's counts."""
    values = await metrics(connection)
    if "todosync_devices" in values:
        return int(values["todosync_devices"])
    counts = (await admin_json(connection, "/service/api/devices")).get("counts", {})
    return int(sum(counts.get(state, 0) for state in STATES))


async def wait_for_devices(service, count, deadline=120):
    connection = service.connection()
    until = time.monotonic() + deadline
    while True:
        known = await known_devices(connection)
        if known >= count:
            connection.close()
            return known
        if time.monotonic() > until:
            raise SystemExit("the service knows %d devices, not %d, %d s after they were made" % (known, count, deadline))
        await asyncio.sleep(0.25)


def pull_target(bound, keyset=True, top=PAGE_TOP):
    """The list request of an incremental pull from `bound` ((updatedAt, id), or None for the start)."""
    if bound is None:
        condition = "updatedAt gt datetimeoffset'%s'" % EPOCH
        order = "updatedAt,id" if keyset else "updatedAt"
    elif keyset:
        time_, last = bound
        condition = ("(updatedAt gt datetimeoffset'%s') or (updatedAt eq datetimeoffset'%s' and id gt '%s')"
                     % (time_, time_, last.replace("'", "''")))
        order = "updatedAt,id"
    else:
        condition = "(updatedAt gt datetimeoffset'%s')" % bound[0]
        order = "updatedAt"
    query = [("$filter", condition), ("$orderby", order), ("__includeDeleted", "true"), ("$top", str(top))]
    return "/tables/%s?%s" % (TABLE, urllib.parse.urlencode(query, quote_via=urllib.parse.quote, safe="$,"))


def insert_body(item_id, text):
    return json.dumps({"id": item_id, "text": text}).encode()


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


# --- (a) inserts with and without device tracking -----------------------------------------------

async def insert_round(service, seconds, with_ids, prefix, connections=16, ids=1000):
    """POSTs for `seconds` from `connections` keep-alive connections; returns (rate of 201s, other
    statuses)."""
    statuses = collections.Counter()
    stop_at = time.monotonic() + seconds

    async def worker(number):
        connection = service.connection()
        sent = 0
        while time.monotonic() < stop_at:
            headers = PROTOCOL_HEADERS + [("Content-Type", "application/json")]
            if with_ids:
                headers.append(("X-ZUMO-INSTALLATION-ID", "bench-%d" % ((number * 7919 + sent) % ids)))
            item = "%s-%d-%d" % (prefix, number, sent)
            try:
                answer = await connection.request("POST", "/tables/" + TABLE, headers, insert_body(item, "bench"))
                statuses[answer.status] += 1
            except (ConnectionError, OSError, asyncio.TimeoutError) as error:
                statuses[type(error).__name__] += 1
            sent += 1
        connection.close()

    start = time.monotonic()
    await asyncio.gather(*(worker(number) for number in range(connections)))
    elapsed = time.monotonic() - start
    done = statuses.pop(201, 0)
    return done, elapsed, statuses


async def measure_inserts(service, seconds):
    await insert_round(service, max(1.0, seconds / 8), True, "warm")  # the 1,000 ids become known
    totals = {True: [0, 0.0], False: [0, 0.0]}
    others = collections.Counter()
    for index, with_ids in enumerate((True, False, False, True)):
        done, elapsed, statuses = await insert_round(service, seconds / 4, with_ids, "r%d" % index)
        totals[with_ids][0] += done
        totals[with_ids][1] += elapsed
        others.update(statuses)
    with_rate = totals[True][0] / totals[True][1]
    without_rate = totals[False][0] / totals[False][1]
    return with_rate, without_rate, others


# --- (c) the devices page at 100 and at 10,000 devices -------------------------------------------

class FormFields(HTMLParser):
    """The inputs of the form that posts to /service/key."""

    def __init__(self):
        super().__init__()
        self.inside = False
        self.action = None
        self.fields = {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and (attrs.get("action") or "").endswith("/service/key"):
            self.inside, self.action = True, attrs.get("action")
        elif tag == "input" and self.inside and attrs.get("name"):
            self.fields[attrs["name"]] = attrs.get("value") or ""

    def handle_endtag(self, tag):
        if tag == "form":
            self.inside = False


def page_headers(service):
    """Headers that open the admin pages: the bearer key when the pages take it, else the session
    cookie of a sign-in through the form. Returns (headers, how)."""
    base = service.url
    request = urllib.request.Request(base + "/service/devices", headers={"Authorization": "Bearer " + ADMIN_KEY})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            if answer.status == 200 and 'id="devices"' in answer.read().decode():
                return [("Authorization", "Bearer " + ADMIN_KEY)], "Authorization: Bearer"
    except urllib.error.HTTPError:
        pass
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    try:
        page = opener.open(base + "/service", timeout=60).read().decode()
    except urllib.error.HTTPError as error:  # the sign-in form may come with 401
        page = error.read().decode()
    form = FormFields()
    form.feed(page)
    if form.action is None:
        raise SystemExit("/service shows no sign-in form (a form posting to /service/key)")
    fields = dict(form.fields, key=ADMIN_KEY)
    opener.open(urllib.request.Request(urllib.parse.urljoin(base + "/service", form.action),
                                       data=urllib.parse.urlencode(fields).encode(), method="POST"), timeout=60).read()
    cookie = "; ".join("%s=%s" % (c.name, c.value) for c in jar)
    return [("Cookie", cookie)], "a session from the sign-in form"


async def page_p50(service, headers, samples):
    connection = service.connection()
    times = []
    for index in range(samples + 3):
        start = time.perf_counter()
        answer = await connection.request("GET", "/service/devices", headers + [("Accept", "text/html")])
        elapsed = time.perf_counter() - start
        if answer.status != 200 or b'id="devices"' not in answer.body:
            raise SystemExit("/service/devices answered %d without table#devices: %s" % (answer.status, answer.body[:300]))
        if index >= 3:
            times.append(elapsed * 1000)
    connection.close()
    return statistics.median(times)


async def make_devices(service, first, last, connections=16):
    """One cheap pull (one row from the start) for each of dev ids page-first … page-(last-1)."""
    ids = iter(range(first, last))
    failures = collections.Counter()

    async def worker():
        connection = service.connection()
        for number in ids:
            headers = PROTOCOL_HEADERS + [("X-ZUMO-INSTALLATION-ID", "page-%d" % number)]
            answer = await connection.request("GET", pull_target(None, top=1), headers)
            if answer.status != 200:
                failures[answer.status] += 1
        connection.close()

    await asyncio.gather(*(worker() for _ in range(connections)))
    if failures:
        raise SystemExit("making devices: answers %s" % dict(failures))


async def measure_pages(service, samples):
    # 1,000 rows, so each device's pull leaves it behind (lag to count) rather than at an empty head.
    seeded = iter(range(1000))

    async def seed():
        connection = service.connection()
        for number in seeded:
            answer = await connection.request("POST", "/tables/" + TABLE,
                                              PROTOCOL_HEADERS + [("Content-Type", "application/json")],
                                              insert_body("seed-%d" % number, "row %d" % number))
            if answer.status != 201:
                raise SystemExit("seeding answered %d" % answer.status)
        connection.close()

    await asyncio.gather(*(seed() for _ in range(8)))
    await make_devices(service, 0, 100)
    await wait_for_devices(service, 100)
    headers, how = page_headers(service)
    small = await page_p50(service, headers, samples)
    await make_devices(service, 100, 10000)
    known = await wait_for_devices(service, 10000)
    large = await page_p50(service, headers, samples)
    return small, large, known, how


# --- The fleet -----------------------------------------------------------------------------------

class Device:
    def __init__(self, number, kind, keyset, inserts):
        self.id = "dev-%d" % number
        self.kind = kind  # advancing, idle, lossy, frozen
        self.keyset = keyset
        self.inserts = inserts
        self.bound = None
        # Where it last asked from and since when (its position as the service should see it).
        self.asked = ("unset",)
        self.asked_since = None
        self.losses_in_row = 0
        self.inserted = 0
        self.frozen_bound = ("unset",)
        self.froze_at = None  # time.time() of its first request from the frozen bound
        # Its latest requests: (time.time(), what became of it, the bound it asked from, rows).
        self.history = collections.deque(maxlen=12)


class Fleet:
    def __init__(self, service, arguments):
        self.service = service
        self.a = arguments
        self.statuses = collections.Counter()
        self.errors = collections.Counter()
        self.requests = 0
        self.abandoned = 0
        self.stop = False
        self.stalled_seen = {}  # device id → time.time() first reported stalled
        self.first_entry = {}  # device id → its API entry when first reported stalled
        self.polls = 0
        self.poll_errors = collections.Counter()
        period, stalled_after = arguments.pull_period, arguments.stalled_after
        self.longest_loss_run = 0
        rng = random.Random(arguments.seed)
        self.rng = random.Random(arguments.seed + 1)
        count = arguments.devices
        numbers = list(range(count))
        frozen = count // 2
        numbers.remove(frozen)
        rng.shuffle(numbers)
        idle = set(numbers[:int(count * arguments.idle)])
        lossy = set(numbers[len(idle):len(idle) + int(count * arguments.lossy)])
        self.devices = []
        for number in range(count):
            kind = ("frozen" if number == frozen else "idle" if number in idle
                    else "lossy" if number in lossy else "advancing")
            inserts = kind == "advancing" and rng.random() < arguments.inserting
            self.devices.append(Device(number, kind, number % 2 == 0, inserts))
        self.frozen = self.devices[frozen]
        self.by_id = {device.id: device for device in self.devices}
        self.offsets = [rng.uniform(0, period) for _ in self.devices]
        if not any(device.inserts for device in self.devices):
            next(device for device in self.devices if device.kind == "advancing").inserts = True

    def headers(self, device):
        return PROTOCOL_HEADERS + [("X-ZUMO-INSTALLATION-ID", device.id), ("User-Agent", "fleet-bench")]

    async def send(self, connection, device, method, target, body=None):
        headers = self.headers(device)
        if body is not None:
            headers = headers + [("Content-Type", "application/json")]
        self.requests += 1
        try:
            answer = await connection.request(method, target, headers, body)
        except (ConnectionError, OSError, asyncio.TimeoutError) as error:
            self.errors[type(error).__name__] += 1
            return None
        self.statuses[answer.status] += 1
        return answer

    def note_ask(self, device, bound):
        if bound != device.asked:
            device.asked, device.asked_since = bound, time.time()

    async def tick(self, connection, device, now):
        if device.inserts:
            device.inserted += 1
            await self.send(connection, device, "POST", "/tables/" + TABLE,
                            insert_body("%s-%d" % (device.id, device.inserted), "from %s" % device.id))
        if device.kind == "frozen" and now >= self.freeze_at:
            if device.frozen_bound == ("unset",):
                device.frozen_bound = device.bound
            self.note_ask(device, device.frozen_bound)
            if device.froze_at is None:
                device.froze_at = device.asked_since
            answer = await self.send(connection, device, "GET", pull_target(device.frozen_bound, device.keyset))
            device.history.append((time.time(), "frozen", device.frozen_bound, answer and answer.status))
            return
        for _ in range(MAX_PAGES_PER_TICK):
            target = pull_target(device.bound, device.keyset)
            self.note_ask(device, device.bound)
            # A loss means asking again from this bound one period later: never when that ask would
            # come stalled-after (less half a second) after the first ask from it, which the rule
            # rightly calls stalled (the first ask may be long before the first loss: a pull at an
            # empty head leaves the bound where it was).
            if (device.kind == "lossy" and time.time() + self.a.pull_period - device.asked_since
                    < self.a.stalled_after - 0.5 and self.rng.random() < self.a.loss_rate):
                device.losses_in_row += 1
                self.longest_loss_run = max(self.longest_loss_run, device.losses_in_row)
                self.abandoned += 1
                self.requests += 1
                device.history.append((time.time(), "abandoned", device.bound, None))
                try:
                    await connection.abandon("GET", target, self.headers(device))
                except (ConnectionError, OSError, asyncio.TimeoutError) as error:
                    self.errors[type(error).__name__] += 1
                return
            sent = time.time()
            answer = await self.send(connection, device, "GET", target)
            if answer is None or answer.status != 200:
                device.history.append((sent, "failed", device.bound, answer and answer.status))
                return
            device.losses_in_row = 0
            rows = answer.json()
            if isinstance(rows, dict):
                rows = rows.get("results", rows.get("items", []))
            device.history.append((sent, "answered", device.bound, len(rows)))
            if rows:
                device.bound = (rows[-1]["updatedAt"], rows[-1]["id"])
            if len(rows) < PAGE_TOP:
                return

    async def run_device(self, device, offset):
        period = self.a.pull_period
        connection = self.service.connection()
        start = self.start + offset
        tick = 0
        while not self.stop:
            at = start + tick * period
            delay = at - time.monotonic()
            if delay > 0:
                try:
                    await asyncio.wait_for(self.stopped.wait(), delay)
                except asyncio.TimeoutError:
                    pass
            if self.stop:
                break
            # A connection idle longer than the service keeps one (30 s) is closed here first.
            if connection.is_open and time.monotonic() - connection.last_used > 25:
                connection.close()
            await self.tick(connection, device, time.monotonic())
            if device.kind == "idle":
                break
            tick += 1
            # Between ticks further apart than 25 s the connection is not kept (the service closes
            # idle connections after 30 s, and holds at most 1,000).
            if period > 25:
                connection.close()
        connection.close()

    async def poll(self):
        connection = self.service.connection()
        while not self.stop:
            try:
                answer = await admin_json(connection, "/service/api/devices?state=stalled")
                seen = time.time()
                self.polls += 1
                for entry in answer.get("devices", []):
                    if entry.get("state") == "stalled" and entry["id"] not in self.stalled_seen:
                        self.stalled_seen[entry["id"]] = seen
                        device = self.by_id.get(entry["id"])
                        self.first_entry[entry["id"]] = (entry, list(device.history) if device else [])
            except (RuntimeError, ConnectionError, OSError, asyncio.TimeoutError, ValueError) as error:
                self.poll_errors[str(error)[:120]] += 1
            try:
                await asyncio.wait_for(self.stopped.wait(), self.poll_interval)
            except asyncio.TimeoutError:
                pass
        connection.close()

    async def run(self):
        a = self.a
        self.poll_interval = min(1.0, a.pull_period / 8)
        self.stopped = asyncio.Event()
        self.start = time.monotonic() + 0.5
        self.freeze_at = self.start + max(2 * a.pull_period, a.duration / 4)
        tasks = [asyncio.ensure_future(self.run_device(device, offset))
                 for device, offset in zip(self.devices, self.offsets)]
        poller = asyncio.ensure_future(self.poll())
        await asyncio.sleep(self.start + a.duration - time.monotonic())
        self.stop = True
        self.stopped.set()
        await asyncio.gather(*tasks, poller)


def fleet_report(fleet, alerts, counts, saves, elapsed, cpu):
    a = fleet.a
    kinds = collections.Counter(device.kind for device in fleet.devices)
    inserting = sum(device.inserts for device in fleet.devices)
    print("fleet: %d devices (%d advancing, of which %d insert; %d idle; %d lossy, each request abandoned with "
          "probability %.2f, %d in a row at most; 1 frozen), %d s, pull period %g s, stalled-after %g s, "
          "behind-after %g s" % (len(fleet.devices), kinds["advancing"], inserting, kinds["idle"], kinds["lossy"],
                                 a.loss_rate, fleet.longest_loss_run, a.duration, a.pull_period, a.stalled_after,
                                 a.behind_after))
    print("  %d requests (%.1f/s), %d abandoned; answers %s%s; service CPU %.1f s"
          % (fleet.requests, fleet.requests / elapsed, fleet.abandoned, dict(sorted(fleet.statuses.items())),
             ("; errors %s" % dict(fleet.errors)) if fleet.errors else "", cpu))
    print("  %d polls of /service/api/devices?state=stalled (every %.2f s)%s; at the end: %s"
          % (fleet.polls, fleet.poll_interval,
             (", poll errors %s" % dict(fleet.poll_errors)) if fleet.poll_errors else "",
             ", ".join("%s %d" % (state, counts.get(state, 0)) for state in STATES)))
    failed = False

    frozen = fleet.frozen
    limit = a.stalled_after + a.pull_period
    alert_at = None
    for alert in alerts:
        if alert.get("device") == frozen.id and alert.get("event") == "stalled":
            alert_at = parse_time(alert.get("at"))
    if frozen.froze_at is None:
        print("FAIL  the frozen device never froze (the run is shorter than a quarter of its duration?)")
        failed = True
    elif frozen.id not in fleet.stalled_seen:
        print("FAIL  frozen device %s: never reported stalled (froze at +%.1f s of the run; limit %.1f s after it)"
              % (frozen.id, frozen.froze_at - fleet.wall_start, limit))
        failed = True
    else:
        delay = fleet.stalled_seen[frozen.id] - frozen.froze_at
        early = delay < a.stalled_after - 0.5
        late = delay - fleet.poll_interval > limit
        server = (", its alert says %.2f s" % (alert_at - frozen.froze_at)) if alert_at else ""
        print("%s  frozen device %s: reported stalled %.2f s after it froze (limit stalled-after + pull period = %.1f s, "
              "not before %.1f s; seen by a poll every %.2f s%s)"
              % ("FAIL" if early or late else "PASS", frozen.id, delay, limit, a.stalled_after, fleet.poll_interval,
                 server))
        failed |= early or late

    others = {device: seen for device, seen in fleet.stalled_seen.items() if device != frozen.id}
    for alert in alerts:
        if alert.get("event") == "stalled" and alert.get("device") != frozen.id:
            others.setdefault(alert.get("device"), parse_time(alert.get("at")))
    if others:
        by_kind = collections.Counter(next((d.kind for d in fleet.devices if d.id == device), "other")
                                      for device in others)
        print("FAIL  false positives: %d other devices reported stalled (%s): %s"
              % (len(others), dict(by_kind), ", ".join(sorted(others)[:20])))
        for device in sorted(others)[:a.explain]:
            explain(fleet, device, others[device])
        failed = True
    else:
        print("PASS  false positives: no other device ever reported stalled")

    if saves is None:
        print("(b) tracking saves: /metrics has no todosync_fleet_saves_total")
    else:
        rate = saves / elapsed
        print("(b) tracking saves: %d flush transactions in %.0f s = %.2f per second (target ≤ 1: %s)"
              % (saves, elapsed, rate, "met" if rate <= 1.0 else "MISSED"))
    return failed


def explain(fleet, device, seen):
    """What a device reported stalled had asked (its own record) and what the service said of it."""
    entry, history = fleet.first_entry.get(device, (None, []))
    start = fleet.wall_start
    print("      %s, first reported stalled at +%.2f s:" % (device, (seen or start) - start))
    for at, outcome, bound, detail in history:
        print("        +%7.2f s  %-9s from %s%s" % (at - start, outcome, bound[0] if bound else "the start",
                                                 "" if detail is None else " (%s)" % detail))
    for table in (entry or {}).get("tables", []):
        print("        service: %s" % json.dumps({key: table.get(key) for key in (
            "name", "state", "position", "positionSince", "lastPull", "head", "lagRows", "lagSeconds")}))


def parse_time(text):
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


async def measure_fleet(service, arguments):
    fleet = Fleet(service, arguments)
    connection = service.connection()
    before = await metrics(connection)
    cpu_before = service.cpu_seconds()
    fleet.wall_start = time.time() + 0.5
    started = time.monotonic()
    await fleet.run()
    elapsed = time.monotonic() - started
    after = await metrics(connection)
    cpu = service.cpu_seconds() - cpu_before
    saves = None
    if "todosync_fleet_saves_total" in after:
        saves = after["todosync_fleet_saves_total"] - before.get("todosync_fleet_saves_total", 0)
    try:
        alerts = (await admin_json(connection, "/service/api/alerts")).get("alerts", [])
    except RuntimeError as error:
        print("(GET /service/api/alerts: %s)" % error)
        alerts = []
    counts = (await admin_json(connection, "/service/api/devices")).get("counts", {})
    connection.close()
    return fleet_report(fleet, alerts, counts, saves, elapsed, cpu)


# --- Main ------------------------------------------------------------------------------------------

def arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "todosync"),
                        help="the todosync binary (default: the release build)")
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--duration", type=float, default=600, help="seconds of the fleet phase")
    parser.add_argument("--pull-period", type=float, default=30, help="seconds between a device's pulls")
    parser.add_argument("--stalled-after", type=int, default=120)
    parser.add_argument("--behind-after", type=int, default=60)
    parser.add_argument("--idle", type=float, default=0.1, help="fraction of devices that go silent")
    parser.add_argument("--lossy", type=float, default=0.1, help="fraction of devices that abandon requests")
    parser.add_argument("--loss-rate", type=float, default=0.3, help="fraction of a lossy device's requests abandoned")
    parser.add_argument("--inserting", type=float, default=0.2, help="fraction of advancing devices that insert")
    parser.add_argument("--insert-seconds", type=float, default=20, help="(a): seconds of inserts in all")
    parser.add_argument("--page-samples", type=int, default=40, help="(c): requests per page size")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--explain", type=int, default=3,
                        help="false positives whose requests and service entry are printed")
    parser.add_argument("--skip", action="append", default=[], choices=["inserts", "pages", "fleet"],
                        help="leave a part out (repeatable)")
    parser.add_argument("--quick", action="store_true",
                        help="50 devices, 40 s, stalled-after 5, behind-after 5, pull period 2, short rounds")
    parsed = parser.parse_args()
    if parsed.quick:
        parsed.devices, parsed.duration, parsed.pull_period = 50, 40, 2
        parsed.stalled_after, parsed.behind_after = 5, 5
        parsed.insert_seconds, parsed.page_samples = 6, 15
    if parsed.devices < 2:
        parser.error("--devices must be at least 2")
    return parsed


async def main(a):
    binary = os.path.abspath(a.binary)
    help_text = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True).stdout
    if "--stalled-after" not in help_text:
        raise SystemExit("%s serve --help has no --stalled-after: this build has no fleet (docs/fleet.md)" % binary)
    folder = tempfile.mkdtemp(prefix="todosync-fleet-bench-")
    services = []

    def serve(name):
        service = Service(binary, folder, name, a.stalled_after, a.behind_after)
        services.append(service)
        return service

    failed = False
    try:
        print("binary %s" % binary)
        if "inserts" not in a.skip:
            service = serve("inserts")
            with_rate, without_rate, others = await measure_inserts(service, a.insert_seconds)
            service.stop()
            print("(a) durable inserts, 16 connections, %.0f s each way: with X-ZUMO-INSTALLATION-ID (1,000 ids) "
                  "%.0f/s, without %.0f/s%s" % (a.insert_seconds / 2, with_rate, without_rate,
                                                 ("; other answers %s" % dict(others)) if others else ""))
            ratio = with_rate / without_rate
            print("(a) with tracking / without: %.3f (target ≥ 0.97: %s)" % (ratio, "met" if ratio >= 0.97 else "MISSED"))
        if "pages" not in a.skip:
            service = serve("pages")
            small, large, known, how = await measure_pages(service, a.page_samples)
            service.stop()
            print("(c) /service/devices p50 (%d requests each, %s): 100 devices %.2f ms, %d devices %.2f ms"
                  % (a.page_samples, how, small, known, large))
            ratio = large / small
            print("(c) 10,000 devices / 100: %.2f (target ≤ 2: %s)" % (ratio, "met" if ratio <= 2 else "MISSED"))
        if "fleet" not in a.skip:
            service = serve("fleet")
            failed |= await measure_fleet(service, a)
            service.stop()
    except (ConnectionError, OSError, RuntimeError, asyncio.TimeoutError) as error:
        gone = [service.died() for service in services if service.died()]
        if not gone:
            raise
        print("FAIL  %s: %s" % (type(error).__name__, error))
        print("\n".join(gone))
        failed = True
    finally:
        for service in services:
            service.stop()
        subprocess.run(["rm", "-rf", folder])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(arguments())))
