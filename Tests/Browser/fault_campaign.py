"""A fault campaign in the spirit of Jepsen, against the real binaries.

Three dashboards with auto-sync on, each through its own `todosync proxy`, sync with two `todosync
serve` instances on one PostgreSQL database. For DURATION seconds they edit overlapping rows (each
client its own column, `c0`..`c2`, of the same rows, so that merges never need a person; and new rows
of their own), while the campaign partitions a client (its proxy refuses connections or loses
answers, switched on and off through the proxy's faults file and SIGHUP), makes a client's link lossy
(some requests lost on the way, some answers lost after the service applied them: `refuse,p=P` and
`drop[,method=M],p=P` rules), pauses a service instance (SIGSTOP, then SIGCONT) and kills and
restarts a client (SIGKILL). With --power-cuts, each client's data folder sits on its own
power-cut filesystem (Tests/PowerCut/powercut_fs.py: writes not fsync-ed are lost), the service is
one `todosync serve` on SQLite on a power-cut filesystem of its own (instead of the two PostgreSQL
instances), and a fault may also cut a client's or the service's power (SIGKILL, then its disk keeps
only what was synced) and restart it (the service on its port).
Every choice comes from the seed, so a campaign can be replayed. Then everything heals, and within HEAL seconds:

- every client holds exactly the service's rows, with the same versions and values;
- every edit a client acknowledged (its API answered 2xx) is on the service: for each client and
  row, the client's column holds the last value it acknowledged (or a later one whose answer was
  lost);
- no client is stalled: each completed a sync after the healing (its `/metrics` say when).

The outcome is `converged`, `stalled` (a client never synced after healing, or still holds queued
changes or conflicts) or `diverged` (everyone synced, and rows or acknowledged edits differ).

    python3 Tests/Browser/fault_campaign.py --campaigns 20 [--seed S] [--duration 60] [--power-cuts]

(`scripts/fault-campaign.sh N` builds todosync, starts a throwaway PostgreSQL and runs this.)
"""
import argparse
import http.cookiejar
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "Tests", "PowerCut"))
from mount import PowerCutMount  # noqa: E402
BIN = os.environ.get("TODOSYNC_BIN") or os.path.join(ROOT, ".build", "debug", "todosync")
# The copy of the binary runs away from the project: it is told where the pages are.
RESOURCES = ["--templates-dir", os.path.join(ROOT, "Templates"), "--public-dir", os.path.join(ROOT, "Public")]
CLIENTS = 3
ROWS = 12
AUTO_SYNC = 5


class Process:
    """A todosync process whose output goes to a log file; `url` is the first address it announced.
    It runs a copy of the binary made for the campaign (`binary`): a build while a campaign runs
    must not make a restart fail."""
    binary = BIN

    def __init__(self, folder, name, args, pattern=r"(http://127\.0\.0\.1:\d+)"):
        self.args, self.log_path = args, os.path.join(folder, name + ".log")
        self.pattern, self.url = pattern, None
        self.start()

    def start(self):
        self.log = open(self.log_path, "a")
        self.process = subprocess.Popen([Process.binary] + self.args, stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        # Well under a second on an idle machine; a loaded CI machine can be far slower.
        deadline, offset = time.time() + 90, os.path.getsize(self.log_path)
        while time.time() < deadline:
            with open(self.log_path) as log:
                log.seek(offset)
                match = re.search(self.pattern, log.read())
            if match:
                self.url = match.group(1)
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        status = self.process.poll()
        if status is None:
            reason = "no address within 90 s (the machine is loaded, or it hangs); stopped it"
            self.signal(signal.SIGKILL)
            self.process.wait()
        else:
            reason = "it exited with status %d before announcing its address" % status
        with open(self.log_path) as log:
            log.seek(offset)
            output = log.read()[-4000:]
        raise RuntimeError("todosync %s did not start: %s; its output (in %s):\n%s"
                           % (" ".join(self.args), reason, self.log_path, output))

    def signal(self, sig):
        if self.process.poll() is None:
            os.killpg(self.process.pid, sig)

    def kill(self):
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGKILL)
        self.process.wait()
        self.log.close()

    def keep_port(self):
        """From now on it starts again on the port it has (`--port 0` chose it)."""
        self.args[self.args.index("--port") + 1] = self.url.rsplit(":", 1)[1]


class PoweredService:
    """`todosync serve` on SQLite on a power-cut filesystem: its power can be cut, and it starts
    again on its port (the clients' proxies keep its address)."""

    def __init__(self, folder):
        self.disk = PowerCutMount(os.path.join(folder, "disk-service"))
        self.disk.mount()
        database = os.path.join(self.disk.path, "service.sqlite")
        self.process = Process(folder, "serve-0", ["serve", "--port", "0", "--database", database] + RESOURCES)
        self.process.keep_port()
        self.url, self.alive = self.process.url, True

    def signal(self, sig):
        self.process.signal(sig)

    def power_cut(self):
        self.process.kill()
        self.disk.cut()
        self.alive = False

    def start(self):
        for attempt in range(3):
            try:
                self.process.start()
                break
            except RuntimeError:  # its port may take a moment to be free after the kill
                if attempt == 2:
                    raise
                time.sleep(0.5)
        self.alive = True

    def kill(self):
        self.process.kill()
        self.disk.unmount(kill=False)


class Client:
    """A dashboard (auto-sync on) behind its own proxy in front of one service instance."""

    def __init__(self, folder, index, upstream, seed, disk=None):
        self.index, self.column = index, "c%d" % index
        self.folder, self.disk = folder, disk  # disk: a PowerCutMount for the data folder, or None
        self.faults = os.path.join(folder, "faults-%d.txt" % index)
        open(self.faults, "w").close()
        self.proxy = Process(folder, "proxy-%d" % index,
                             ["proxy", "--listen", "0", "--to", upstream, "--faults-file", self.faults,
                              "--seed", str(seed), "--quiet"])
        self.data = os.path.join(disk.path if disk else folder, "client-%d" % index)
        self.dashboard = None
        self.start()

    def start(self):
        args = ["dashboard", "--port", "0", "--data-dir", self.data, "--remote", self.proxy.url,
                "--auto-sync", str(AUTO_SYNC)] + RESOURCES
        if self.dashboard is None:
            self.dashboard = Process(self.folder, "client-%d" % self.index, args)
        else:
            self.dashboard.start()
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.csrf = self.get("/api/status")["csrfToken"]
        self.alive = True

    def kill(self):
        self.dashboard.signal(signal.SIGKILL)
        self.dashboard.process.wait()
        self.alive = False

    def power_cut(self):
        """Kills the dashboard, then cuts its disk's power: what it had not synced is gone."""
        self.kill()
        self.disk.cut()

    def partition(self, *rules):
        """The proxy's fault rules from now on: `refuse`, `drop` (forward, lose the answer), rules
        with a probability (a lossy link), or none (heal)."""
        with open(self.faults, "w") as file:
            file.write("".join(rule + "\n" for rule in rules))
        self.proxy.signal(signal.SIGHUP)

    def get(self, path, timeout=10):
        with self.opener.open(self.dashboard.url + path, timeout=timeout) as answer:
            return json.load(answer)

    def send(self, method, path, body, timeout=5):
        request = urllib.request.Request(
            self.dashboard.url + path, data=json.dumps(body).encode(), method=method,
            headers={"Content-Type": "application/json", "X-CSRF-Token": self.csrf})
        with self.opener.open(request, timeout=timeout) as answer:
            return answer.status

    def rows(self):
        rows, older = {}, None
        while True:
            page = self.get("/api/data/todoitem" + ("?older=%s" % older if older else ""))
            for item in page["items"]:
                rows[item["id"]] = item
            older = page.get("older")
            if not older:
                return rows

    def last_success(self):
        with self.opener.open(self.dashboard.url + "/metrics", timeout=10) as answer:
            text = answer.read().decode()
        match = re.search(r"^todosync_last_success_timestamp_seconds (\S+)$", text, re.M)
        return float(match.group(1)) if match else 0.0


def service_rows(url):
    rows, skip = {}, 0
    while True:
        request = urllib.request.Request(
            "%s/tables/todoitem?$top=1000&$skip=%d&$orderby=id" % (url, skip), headers={"ZUMO-API-VERSION": "2.0.0"})
        with urllib.request.urlopen(request, timeout=10) as answer:
            page = json.load(answer)
        for item in page:
            rows[item["id"]] = item
        if len(page) < 1000:
            return rows
        skip += len(page)


def fresh_database(cluster_url):
    """A new, empty database in the cluster of `cluster_url`; its URL."""
    match = re.match(r"postgres://([^@]+)@([^:/]+):(\d+)/([^?]+)(\?.*)?", cluster_url)
    user, host, port, _, query = match.groups()
    name = "campaign_" + uuid.uuid4().hex[:12]
    subprocess.run(["createdb", "-h", host, "-p", port, "-U", user, name], check=True, capture_output=True)
    return "postgres://%s@%s:%s/%s%s" % (user, host, port, name, query or "")


def run(seed, duration, heal_window, cluster_url, log=print, power_cuts=False):
    """One campaign; returns its report (a dict with `outcome`)."""
    rng = random.Random(seed)
    folder = tempfile.mkdtemp(prefix="todosync-campaign-")
    Process.binary = os.path.join(folder, "todosync")
    shutil.copy2(BIN, Process.binary)
    services, clients, disks = [], [], []
    report = {"seed": seed, "duration": duration, "faults": [], "folder": folder}
    try:
        if power_cuts:
            services = [PoweredService(folder)]
        else:
            database = fresh_database(cluster_url)
            services = [Process(folder, "serve-%d" % n, ["serve", "--port", "0", "--database", database] + RESOURCES)
                        for n in range(2)]
        for n in range(ROWS):
            request = urllib.request.Request(
                services[0].url + "/tables/todoitem", method="POST",
                data=json.dumps({"id": "row-%02d" % n, "text": "row %d" % n, "c0": 0, "c1": 0, "c2": 0}).encode(),
                headers={"ZUMO-API-VERSION": "2.0.0", "Content-Type": "application/json"})
            urllib.request.urlopen(request, timeout=10).close()
        if power_cuts:
            for i in range(CLIENTS):
                disks.append(PowerCutMount(os.path.join(folder, "disk-%d" % i)))
                disks[-1].mount()
        clients = [Client(folder, i, services[i % len(services)].url, seed * 10 + i, disks[i] if disks else None)
                   for i in range(CLIENTS)]
        deadline = time.time() + 60
        while not all(len(client.rows()) >= ROWS for client in clients):
            if time.time() > deadline:
                raise RuntimeError("the clients never pulled the seeded rows")
            time.sleep(0.2)

        acked = {}       # (client, row) -> the last value the client acknowledged
        unknown = {}     # (client, row) -> values sent after it whose answer was lost
        counters = [0] * CLIENTS
        own_rows = [[] for _ in range(CLIENTS)]
        heals = []       # (time, action) to undo a fault
        started = time.time()
        next_fault = started + rng.uniform(1, 4)
        # With power cuts, the first faults cut the service's power, then a client's: every campaign has both.
        first_kinds = ["service power", "power"] if disks else []
        edits = 0
        while time.time() - started < duration:
            now = time.time()
            for due, undo in [h for h in heals if h[0] <= now]:
                undo()
                heals.remove((due, undo))
            if now >= next_fault:
                kind = first_kinds.pop(0) if first_kinds else rng.choice(
                    ["partition", "partition", "lossy", "pause", "kill"] + (["power", "service power"] if disks else []))
                if kind == "partition":
                    client, mode = rng.choice(clients), rng.choice(["refuse", "drop"])
                    client.partition(mode)
                    heals.append((now + rng.uniform(3, 10), lambda c=client: c.partition()))
                    report["faults"].append("%.1f partition client %d (%s)" % (now - started, client.index, mode))
                elif kind == "lossy":
                    client, method = rng.choice(clients), rng.choice(["", ",method=POST", ",method=PATCH"])
                    rules = ["refuse,p=%.2f" % rng.uniform(0.05, 0.2),
                             "drop%s,p=%.2f" % (method, rng.uniform(0.1, 0.4))]
                    client.partition(*rules)
                    heals.append((now + rng.uniform(3, 10), lambda c=client: c.partition()))
                    report["faults"].append("%.1f lossy link client %d (%s)" % (now - started, client.index,
                                                                               "; ".join(rules)))
                elif kind == "service power":
                    service = services[0]
                    if service.alive:
                        service.power_cut()
                        heals.append((now + rng.uniform(1, 4), service.start))
                        report["faults"].append("%.1f power cut of the service" % (now - started))
                elif kind == "pause":
                    service = rng.choice(services)
                    service.signal(signal.SIGSTOP)
                    heals.append((now + rng.uniform(2, 6), lambda s=service: s.signal(signal.SIGCONT)))
                    report["faults"].append("%.1f pause %s" % (now - started, service.url))
                else:  # kill, or power cut
                    client = rng.choice([c for c in clients if c.alive] or clients)
                    if client.alive:
                        client.power_cut() if kind == "power" else client.kill()
                        heals.append((now + rng.uniform(1, 4), client.start))
                        report["faults"].append("%.1f %s client %d" % (
                            now - started, "power cut" if kind == "power" else "kill", client.index))
                next_fault = now + rng.uniform(2, 6)
            client = rng.choice(clients)
            if client.alive:
                counters[client.index] += 1
                value = counters[client.index]
                if rng.random() < 0.1:
                    row = "c%d-new-%d" % (client.index, value)
                    method, path, body = "POST", "/api/data/todoitem", {"id": row, "text": "new", client.column: value}
                else:
                    row = rng.choice(["row-%02d" % n for n in range(ROWS)] + own_rows[client.index])
                    method, path, body = "PATCH", "/api/data/todoitem/" + row, {client.column: value}
                try:
                    status = client.send(method, path, body)
                    if 200 <= status < 300:
                        acked[(client.index, row)] = value
                        unknown.pop((client.index, row), None)
                        if method == "POST":
                            own_rows[client.index].append(row)
                        edits += 1
                except urllib.error.HTTPError:
                    pass  # refused (a row not here yet): nothing was written
                except Exception:
                    unknown.setdefault((client.index, row), []).append(value)
            time.sleep(rng.uniform(0.05, 0.2))

        # Heal everything.
        for _, undo in heals:
            undo()
        for service in services:
            service.signal(signal.SIGCONT)
            if not getattr(service, "alive", True):
                service.start()
        for client in clients:
            client.partition()
            if not client.alive:
                client.start()
        healed = time.time()
        report["edits"] = edits
        state = None
        while time.time() - healed < heal_window:
            state = judge(clients, services, acked, unknown, healed)
            if state["outcome"] == "converged":
                break
            time.sleep(0.5)
        report.update(state)
        report["seconds to converge"] = round(time.time() - healed, 1)
        log(json.dumps({k: v for k, v in report.items() if k != "folder"}))
        return report
    finally:
        for client in clients:
            for process in (client.dashboard, client.proxy):
                if process:
                    process.kill()
        for service in services:
            service.kill()
        for disk in disks:
            disk.unmount(kill=False)
        os.remove(Process.binary)
        if report.get("outcome") == "converged":
            shutil.rmtree(folder, ignore_errors=True)


def judge(clients, services, acked, unknown, healed):
    """The campaign's outcome as things stand now."""
    try:
        statuses = [client.get("/api/status") for client in clients]
        synced = [client.last_success() >= healed for client in clients]
        truth = service_rows(services[0].url)
        copies = [client.rows() for client in clients]
    except Exception as error:  # a client still starting, say
        return {"outcome": "stalled", "why": "not answering: %s" % error}
    idle = [s["pending"] == 0 and s["conflicts"] == 0 and not s["running"] for s in statuses]
    if not all(synced) or not all(idle):
        return {"outcome": "stalled", "why": "synced after healing %s, nothing queued %s" % (synced, idle)}
    keys = ("version", "text", "c0", "c1", "c2")
    expected = {row: tuple(item.get(k) for k in keys) for row, item in truth.items()}
    for client, rows in zip(clients, copies):
        held = {row: tuple(item.get(k) for k in keys) for row, item in rows.items()}
        if held != expected:
            differing = sorted(set(held.items()) ^ set(expected.items()))[:4]
            return {"outcome": "diverged", "why": "client %d differs from the service: %s" % (client.index, differing)}
    for (index, row), value in acked.items():
        final = truth.get(row, {}).get("c%d" % index)
        if final != value and final not in unknown.get((index, row), []):
            return {"outcome": "diverged",
                    "why": "client %d acknowledged c%d=%s on %s; the service has %s" % (index, index, value, row, final)}
    return {"outcome": "converged", "why": "%d rows everywhere" % len(truth)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--campaigns", type=int, default=1)
    parser.add_argument("--seed", type=int, default=None, help="the first campaign's seed (then +1 each)")
    parser.add_argument("--duration", type=float, default=60)
    parser.add_argument("--heal", type=float, default=60, help="seconds allowed to converge after healing")
    parser.add_argument("--postgres", default=os.environ.get("TODOSYNC_TEST_POSTGRES_URL"))
    parser.add_argument("--power-cuts", action="store_true",
                        help="clients' data on power-cut filesystems, and power cuts among the faults (needs FUSE)")
    options = parser.parse_args()
    if not options.postgres and not options.power_cuts:
        sys.exit("needs --postgres URL (or TODOSYNC_TEST_POSTGRES_URL); scripts/fault-campaign.sh starts one")
    first = options.seed if options.seed is not None else random.randrange(1, 1_000_000)
    counts = {"converged": 0, "stalled": 0, "diverged": 0}
    for n in range(options.campaigns):
        report = run(first + n, options.duration, options.heal, options.postgres, power_cuts=options.power_cuts)
        counts[report["outcome"]] += 1
    print("%d campaigns (seeds %d..%d): %d converged, %d stalled, %d diverged" % (
        options.campaigns, first, first + options.campaigns - 1, counts["converged"], counts["stalled"],
        counts["diverged"]))
    sys.exit(0 if counts["converged"] == options.campaigns else 3)


if __name__ == "__main__":
    main()
