"""The fleet (docs/fleet.md) against the real binary: simulated devices over real HTTP (keep-alive
connections, `X-ZUMO-INSTALLATION-ID`) against `todosync serve --stalled-after 2 --behind-after 1
--admin-key K`: a device that keeps asking from a frozen bound while the head moves is stalled, one
that advances stays healthy; bad ids and bad `X-TodoSync-Client-State` headers are refused and
noted nowhere; the admin API's credentials; `/metrics` by state without device ids; one webhook per
stall episode (a real receiver on loopback), sent again when the receiver answers 500; and the
devices pages in headless Chromium, signed in through the form (screenshots in
$TODOSYNC_SCREENSHOTS when set). Nothing waits a fixed time: every wait polls with a deadline."""
import http.client
import http.server
import json
import os
import re
import subprocess
import tempfile
import threading
import time
import urllib.parse
import uuid

import pytest
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By

from conftest import BIN, Launch, first_match
from dashboard import wait_for, wait_for_text

ADMIN_KEY = "fleet-admin-key-4b7e2c91"
APP_KEY = "fleet-app-key-77d0aa"
AUTH_SECRET = "fleet-auth-secret-0123456789abcdef"
EPOCH = "1970-01-01T00:00:00.000Z"
STALLED_AFTER, BEHIND_AFTER = 2, 1
# How long the service may take, on a loaded machine, to show what a rule says it shows at once.
DEADLINE = 60
STATES = {"healthy", "behind", "stalled", "offline", "old-shape"}


def _feature_missing():
    """Why the fleet tests cannot run on this binary, or None when they can."""
    try:
        done = subprocess.run([BIN, "serve", "--help"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return "cannot run %s serve --help: %s" % (BIN, error)
    if "--stalled-after" not in done.stdout + done.stderr:
        return "the fleet is not built yet: %s serve --help has no --stalled-after" % BIN
    return None


MISSING = _feature_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def unique(name):
    return "%s-%s" % (name, uuid.uuid4().hex[:8])


# --- The service -------------------------------------------------------------------------------

@pytest.fixture
def serve():
    """Starts `todosync serve --port 0` on a SQLite file of its own with the fleet's flags and
    `extra`; returns its base URL. Stops every one it started."""
    launches = []

    def start(*extra, stalled_after=STALLED_AFTER, behind_after=BEHIND_AFTER, admin_key=ADMIN_KEY):
        folder = tempfile.mkdtemp(prefix="todosync-fleet-")
        args = ["serve", "--port", "0", "--database", os.path.join(folder, "service.sqlite"),
                "--stalled-after", str(stalled_after), "--behind-after", str(behind_after)]
        if admin_key:
            args += ["--admin-key", admin_key]
        launch = Launch(args + list(extra))
        launches.append(launch)
        return launch.wait_for(first_match(r"(http://127\.0\.0\.1:\d+)"), "its address")

    yield start
    for launch in launches:
        launch.kill()


def call(base, method, path, headers=None, body=None):
    """One request on a connection of its own: (status, headers, body bytes)."""
    parsed = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, answer.headers, answer.read()
    finally:
        connection.close()


def admin(base, path, key=ADMIN_KEY):
    status, _, body = call(base, "GET", path, {"Authorization": "Bearer " + key, "Accept": "application/json"})
    assert status == 200, (path, status, body[:500])
    return json.loads(body)


def devices(base, query=""):
    """The API's devices by id, and its counts."""
    answer = admin(base, "/service/api/devices" + query)
    return {entry["id"]: entry for entry in answer["devices"]}, answer["counts"]


def eventually(check, what, deadline=DEADLINE, interval=0.1):
    """`check()`'s first truthy result; fails with `what` and the last result after `deadline` s."""
    until = time.monotonic() + deadline
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > until:
            raise AssertionError("%s: not within %d s (last: %r)" % (what, deadline, result))
        time.sleep(interval)


class Device:
    """A phone over one keep-alive connection: `X-ZUMO-INSTALLATION-ID` on every request, inserts,
    and incremental pulls with the todosync keyset bound."""

    def __init__(self, base, device_id, app_key=None):
        parsed = urllib.parse.urlsplit(base)
        self.host, self.port = parsed.hostname, parsed.port
        self.id = device_id
        self.app_key = app_key
        self.bound = None  # (updatedAt, id) of the last row received
        self.connection = None
        self.inserted = 0

    def request(self, method, path, body=None, headers=None):
        sent = {"ZUMO-API-VERSION": "2.0.0"}
        if self.id is not None:
            sent["X-ZUMO-INSTALLATION-ID"] = self.id
        if self.app_key:
            sent["X-ZUMO-APPLICATION"] = self.app_key
        if body is not None:
            sent["Content-Type"] = "application/json"
            body = json.dumps(body).encode()
        sent.update(headers or {})
        for attempt in (0, 1):
            reused = self.connection is not None
            if not reused:
                self.connection = http.client.HTTPConnection(self.host, self.port, timeout=30)
            try:
                self.connection.request(method, path, body=body, headers=sent)
                answer = self.connection.getresponse()
                return answer.status, answer.headers, answer.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # A kept-alive connection the service closed meanwhile: once more on a new one.
                self.connection.close()
                self.connection = None
                if not reused or attempt:
                    raise

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None

    def insert(self):
        self.inserted += 1
        item = "%s-row-%d" % (self.id, self.inserted)
        status, _, body = self.request("POST", "/tables/todoitem", {"id": item, "text": "from " + self.id})
        assert status == 201, (status, body[:300])
        return item

    def pull(self, bound, top=50, headers=None):
        """One page from `bound`; returns (status, rows)."""
        status, _, body = self.request("GET", pull_path(bound, top), headers=headers)
        return status, (json.loads(body) if status == 200 else body)

    def catch_up(self):
        """Pulls from its bound until a page comes back empty: it then asks from the head."""
        for _ in range(100):
            status, rows = self.pull(self.bound)
            assert status == 200, (status, rows)
            if not rows:
                return
            self.bound = (rows[-1]["updatedAt"], rows[-1]["id"])
        raise AssertionError("100 pages and still not at the head")


def pull_path(bound, top=50):
    if bound is None:
        condition = "updatedAt gt datetimeoffset'%s'" % EPOCH
    else:
        condition = ("(updatedAt gt datetimeoffset'%s') or (updatedAt eq datetimeoffset'%s' and id gt '%s')"
                     % (bound[0], bound[0], bound[1].replace("'", "''")))
    query = [("$filter", condition), ("$orderby", "updatedAt,id"), ("__includeDeleted", "true"), ("$top", str(top))]
    return "/tables/todoitem?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote, safe="$,")


class Scene:
    """A writer that inserts, a device frozen at a bound, and one that keeps up, driven one round
    at a time: insert, the frozen pull, the catching up."""

    def __init__(self, base, app_key=None):
        self.base = base
        self.writer = Device(base, unique("writer"), app_key)
        self.frozen = Device(base, unique("frozen"), app_key)
        self.mover = Device(base, unique("mover"), app_key)
        for _ in range(3):
            self.writer.insert()
        self.frozen.catch_up()
        self.mover.catch_up()
        self.frozen_bound = self.frozen.bound

    def round(self, frozen=True):
        self.writer.insert()
        if frozen:
            status, rows = self.frozen.pull(self.frozen_bound)
            assert status == 200, (status, rows)
            assert rows, "the frozen device's pull brings the rows after its bound"
        else:
            self.frozen.catch_up()
        self.mover.catch_up()

    def stall(self):
        """Rounds until the API reports the frozen device stalled; the mover is healthy at every
        look (it has just caught up). Returns the frozen device's entry."""
        def look():
            self.round()
            by_id, _ = devices(self.base)
            mover = by_id.get(self.mover.id)
            assert mover is not None or time.monotonic() - started < 2, "the mover is unknown after 2 s"
            if mover is not None:
                assert mover["state"] == "healthy", mover
            entry = by_id.get(self.frozen.id)
            return entry if entry and entry["state"] == "stalled" else None
        started = time.monotonic()
        return eventually(look, "the frozen device %s reported stalled" % self.frozen.id, interval=0.2)

    def close(self):
        for device in (self.writer, self.frozen, self.mover):
            device.close()


# --- States over real HTTP -----------------------------------------------------------------------

def test_a_frozen_device_stalls_and_one_that_advances_stays_healthy(serve):
    base = serve()
    scene = Scene(base)
    started = time.monotonic()
    entry = scene.stall()
    assert time.monotonic() - started >= STALLED_AFTER - 0.5, "stalled before --stalled-after passed"
    table = next(t for t in entry["tables"] if t["name"] == "todoitem")
    assert table["state"] == "stalled", table
    assert table["lagRows"] >= 1 and table["head"] and table["lastPull"] and table["positionSince"], table
    assert entry["client"]["protocol"] == "v2", entry

    stalled, counts = devices(base, "?state=stalled")
    assert scene.frozen.id in stalled and scene.mover.id not in stalled, sorted(stalled)
    assert all(entry["state"] == "stalled" for entry in stalled.values())
    assert counts["stalled"] >= 1 and set(counts) >= STATES, counts
    one = admin(base, "/service/api/devices/" + scene.frozen.id)
    assert one["id"] == scene.frozen.id and one["state"] == "stalled" and isinstance(one["lag"], list), one
    assert admin(base, "/service/api/devices/" + scene.mover.id)["state"] == "healthy"
    status, _, _ = call(base, "GET", "/service/api/devices/never-seen-device",
                        {"Authorization": "Bearer " + ADMIN_KEY})
    assert status == 404

    # It asks from the head again: no longer stalled.
    scene.frozen.bound = scene.frozen_bound
    eventually(lambda: scene.round(frozen=False) or devices(base)[0][scene.frozen.id]["state"] != "stalled",
               "the frozen device no longer stalled once it advances", interval=0.2)
    scene.close()


def keep_going(step, seconds):
    """Runs `step` over and over for `seconds` (a window that only time can make: the stall time,
    or the time in which a second alert would come)."""
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        step()
        time.sleep(0.1)


def test_a_device_at_the_head_of_a_quiet_table_is_not_stalled_when_a_row_comes(serve):
    """A device that asked from the head of a quiet table for longer than --stalled-after (every
    answer empty: nothing past its position), then gets the first new row with its next pull, is at
    the head and advancing: the time with nothing past its position is no stall."""
    base = serve()
    writer, phone = Device(base, unique("writer")), Device(base, unique("quiet"))
    writer.insert()
    phone.catch_up()
    keep_going(phone.catch_up, STALLED_AFTER + 1)
    assert devices(base)[0][phone.id]["state"] == "healthy"

    writer.insert()
    status, rows = phone.pull(phone.bound)
    assert status == 200 and len(rows) == 1, (status, rows)
    new_row = rows[0]["updatedAt"]

    def after_that_pull():
        entry = devices(base)[0][phone.id]
        table = next(t for t in entry["tables"] if t["name"] == "todoitem")
        return entry if table["lastPull"] >= new_row else None
    entry = eventually(after_that_pull, "the API showing the pull that brought the new row")
    assert entry["state"] in ("healthy", "behind"), \
        "at the head of a quiet table, then one new row pulled at once: %s" % json.dumps(entry["tables"])
    phone.close()
    writer.close()


def noted(base, sentinel):
    """Every device id the API lists once `sentinel` (sent after everything else) shows."""
    Device(base, sentinel).pull(None)
    return eventually(lambda: (lambda ids: ids if sentinel in ids else None)(set(devices(base)[0])),
                      "the sentinel device %s listed" % sentinel)


BAD_IDS = ["bad id", "a/b", "semi;colon", "quote'd", "caf\u00e9", "x" * 129, ""]


def test_bad_installation_ids_are_refused_and_noted_nowhere(serve):
    base = serve()
    longest = "y" * 128
    status, rows = Device(base, longest).pull(None)
    assert status == 200, "128 characters of [A-Za-z0-9._:-] is an id: %r" % rows
    allowed = Device(base, "Aa0._:-")
    assert allowed.pull(None)[0] == 200

    refused = []
    for bad in BAD_IDS:
        device = Device(base, None)
        header = bad.encode("utf-8").decode("latin-1")  # the bytes as sent on the wire
        get, _, got = device.request("GET", pull_path(None), headers={"X-ZUMO-INSTALLATION-ID": header})
        item = unique("refused")
        post, _, posted = device.request("POST", "/tables/todoitem", {"id": item, "text": "must not be stored"},
                                         headers={"X-ZUMO-INSTALLATION-ID": header})
        stored, _, _ = call(base, "GET", "/tables/todoitem/" + item, {"ZUMO-API-VERSION": "2.0.0"})
        if (get, post, stored) != (400, 400, 404):
            refused.append("%r: GET %d %r, POST %d %r, then GET of the row %d"
                           % (bad, get, got[:120], post, posted[:120], stored))
    assert not refused, "ids that break the rule must be a 400 and store nothing:\n" + "\n".join(refused)

    ids = noted(base, unique("sentinel"))
    assert longest in ids and "Aa0._:-" in ids
    wrong = [i for i in ids if i in BAD_IDS or i.startswith("x" * 64) or "caf" in i]
    assert not wrong, "refused ids were noted: %r" % wrong


BAD_CLIENT_STATES = ["nonsense", "queue=abc", "queue=1, queue=2", "colour=1", "queue=-1", "queue=1000000001",
                     "queue=1.5", "queue=", "queue=3; oldest=1"]


def test_client_state_header_is_checked_and_reported_as_the_devices_own_word(serve):
    base = serve()
    problems = []
    tried = []
    for header in BAD_CLIENT_STATES:
        device = Device(base, unique("state"))
        tried.append(device.id)
        status, body = device.pull(None, headers={"X-TodoSync-Client-State": header})
        if status != 400:
            problems.append("%r: %d %r" % (header, status, body if status != 200 else "(a page)"))
    assert not problems, "a nonsense X-TodoSync-Client-State must be a 400:\n" + "\n".join(problems)

    reporter = Device(base, unique("reporter"))
    status, _ = reporter.pull(None, headers={"X-TodoSync-Client-State": "queue=3, oldest=120, conflicts=1"})
    assert status == 200
    edge = Device(base, unique("edge"))
    assert edge.pull(None, headers={"X-TodoSync-Client-State": "queue=1000000000, oldest=0, conflicts=0"})[0] == 200

    ids = noted(base, unique("sentinel"))
    assert not set(tried) & ids, "devices whose only request was refused were noted: %r" % (set(tried) & ids)
    entry = devices(base)[0][reporter.id]
    reported = entry["reported"]
    assert (reported["queue"], reported["oldest"], reported["conflicts"]) == (3, 120, 1), reported
    assert reported.get("at"), reported
    assert entry["state"] == "healthy", "the reported queue is never used to decide a state: %r" % entry


# --- Who may look ------------------------------------------------------------------------------------

def test_the_admin_api_takes_the_admin_key_only(serve):
    token = subprocess.run([BIN, "serve", "--auth-secret", AUTH_SECRET, "--issue-token", "alice"],
                           capture_output=True, text=True, timeout=60)
    assert token.returncode == 0, token.stderr
    user_token = token.stdout.strip()
    base = serve("--app-key", APP_KEY, "--auth-secret", AUTH_SECRET)
    Device(base, unique("known"), APP_KEY).pull(None)

    answers = {}
    for label, headers in [
        ("nothing", {}),
        ("the application key alone", {"X-ZUMO-APPLICATION": APP_KEY}),
        ("the application key as a bearer", {"Authorization": "Bearer " + APP_KEY}),
        ("a wrong bearer", {"Authorization": "Bearer not-the-admin-key"}),
        ("a user's token", {"X-ZUMO-APPLICATION": APP_KEY, "X-ZUMO-AUTH": user_token}),
        ("a user's token as a bearer", {"Authorization": "Bearer " + user_token}),
    ]:
        for path in ("/service/api/devices", "/service/api/alerts"):
            answers[(label, path)] = call(base, "GET", path, headers)[0]
    expected = {key: 401 if key[0] == "nothing" else 403 for key in answers}
    assert answers == expected

    assert set(admin(base, "/service/api/devices")) >= {"devices", "counts"}
    assert "alerts" in admin(base, "/service/api/alerts")


def test_metrics_count_devices_by_state_and_name_none(serve):
    base = serve()
    scene = Scene(base)
    scene.stall()
    names = [scene.writer.id, scene.frozen.id, scene.mover.id]

    def sample():
        status, _, body = call(base, "GET", "/metrics")
        assert status == 200
        text = body.decode()
        counts = {match.group(1): float(match.group(2))
                  for match in re.finditer(r'^todosync_devices\{state="([^"]+)"\}\s+(\S+)$', text, re.MULTILINE)}
        return (text, counts) if counts.get("stalled", 0) >= 1 and sum(counts.values()) >= 3 else None
    text, counts = eventually(sample, "todosync_devices{state=...} counting the stalled device")
    assert set(counts) == STATES, counts
    assert "todosync_devices{state=" in text
    leaked = [name for name in names if name in text]
    assert not leaked, "device ids in /metrics: %r" % leaked
    scene.close()


# --- Alerts ----------------------------------------------------------------------------------------------

class Receiver:
    """A webhook receiver on 127.0.0.1 (a thread): keeps every POST; answers the statuses given in
    turn, then 200."""

    def __init__(self, statuses=()):
        self.posts = []
        self.statuses = list(statuses)
        self.lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.lock:
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                    receiver.posts.append({"path": self.path, "at": time.monotonic(),
                                           "type": self.headers.get("Content-Type", ""), "body": body,
                                           "status": status})
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/hook" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def alerts(self, device, event=None):
        with self.lock:
            posts = list(self.posts)
        found = []
        for post in posts:
            alert = json.loads(post["body"])
            if alert.get("id") == device and (event is None or alert.get("event") == event):
                found.append(dict(post, alert=alert))
        return found

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    made = []

    def make(statuses=()):
        made.append(Receiver(statuses))
        return made[-1]
    yield make
    for one in made:
        one.close()


def test_one_webhook_per_stall_episode(serve, receiver):
    hook = receiver()
    base = serve("--alert-webhook", hook.url)
    scene = Scene(base)
    device = scene.frozen.id

    def stalled_alert():
        scene.round()
        return hook.alerts(device, "stalled")
    first = eventually(stalled_alert, "a stalled webhook for %s" % device, interval=0.2)[0]
    alert = first["alert"]
    assert first["path"] == "/hook" and first["type"].startswith("application/json"), first
    assert alert["event"] == "stalled" and alert["state"] == "stalled" and alert["table"] == "todoitem", alert
    assert alert.get("since") and alert.get("at"), alert
    # It keeps asking from the same bound for several more --stalled-after: no second alert.
    keep_going(scene.round, 3 * STALLED_AFTER)
    assert len(hook.alerts(device, "stalled")) == 1, hook.alerts(device)
    assert devices(base)[0][device]["state"] == "stalled"

    def recovered_alert():
        scene.round(frozen=False)
        return hook.alerts(device, "recovered")
    recovered = eventually(recovered_alert, "a recovered webhook for %s" % device, interval=0.2)[0]["alert"]
    assert recovered["event"] == "recovered" and recovered["table"] == "todoitem", recovered
    assert recovered["state"] in STATES - {"stalled"}, recovered
    keep_going(lambda: scene.round(frozen=False), 3 * STALLED_AFTER)
    assert len(hook.alerts(device, "recovered")) == 1 and len(hook.alerts(device, "stalled")) == 1, \
        hook.alerts(device)
    assert not hook.alerts(scene.mover.id) and not hook.alerts(scene.writer.id)

    listed = [a for a in admin(base, "/service/api/alerts")["alerts"] if a["device"] == device]
    assert [a["event"] for a in listed] == ["recovered", "stalled"], listed  # newest first
    scene.close()


def test_a_webhook_answered_with_an_error_is_sent_again(serve, receiver):
    hook = receiver(statuses=[500])
    base = serve("--alert-webhook", hook.url)
    scene = Scene(base)
    device = scene.frozen.id

    def two():
        scene.round()
        found = hook.alerts(device, "stalled")
        return found if len(found) >= 2 else None
    first, second = eventually(two, "the stalled webhook sent again after a 500", interval=0.2)[:2]
    assert first["status"] == 500 and second["status"] == 200
    assert second["alert"] == first["alert"], "the same alert again"
    assert second["at"] - first["at"] >= 0.5, "tried again after a pause (1 s), not at once"
    keep_going(scene.round, 3 * STALLED_AFTER)
    assert len(hook.alerts(device, "stalled")) == 2, hook.alerts(device)
    scene.close()


# --- The pages, in Chromium --------------------------------------------------------------------

def screenshot(browser, name):
    folder = os.environ.get("TODOSYNC_SCREENSHOTS")
    if folder:
        os.makedirs(folder, exist_ok=True)
        browser.save_screenshot(os.path.join(folder, "fleet-%s.png" % name))


def row_ids(browser):
    try:
        return {row.get_attribute("data-device-id")
                for row in browser.find_elements(By.CSS_SELECTOR, "table#devices tr[data-device-id]")}
    except StaleElementReferenceException:
        return None


def test_the_devices_pages_signed_in_with_the_admin_key(serve, browser):
    base = serve()
    scene = Scene(base)
    scene.stall()
    scene.close()  # they stop asking: the states stay as they are

    browser.get(base + "/service")
    field = wait_for(browser, "form input[name=key]")
    screenshot(browser, "1-sign-in")
    field.send_keys(ADMIN_KEY)
    form = browser.find_element(By.CSS_SELECTOR, "form:has(input[name=key])")
    assert (form.get_attribute("action") or "").endswith("/service/key"), form.get_attribute("action")
    buttons = form.find_elements(By.CSS_SELECTOR, "button, input[type=submit]")
    if buttons:
        buttons[0].click()
    else:
        form.submit()
    eventually(lambda: not browser.find_elements(By.CSS_SELECTOR, "input[name=key]"),
               "the sign-in form replaced by the service's page", deadline=30)

    browser.get(base + "/service/devices")
    frozen_row = 'table#devices tr[data-device-id="%s"]' % scene.frozen.id
    mover_row = 'table#devices tr[data-device-id="%s"]' % scene.mover.id
    wait_for_text(browser, frozen_row + " td.state", "stalled")
    wait_for_text(browser, mover_row + " td.state", "healthy")
    everyone = eventually(lambda: row_ids(browser), "the rows of table#devices")
    assert {scene.frozen.id, scene.mover.id} <= everyone, everyone
    screenshot(browser, "2-devices")

    browser.get(base + "/service/devices?state=stalled")
    wait_for_text(browser, frozen_row + " td.state", "stalled")
    narrowed = eventually(lambda: row_ids(browser), "the rows of table#devices?state=stalled")
    assert scene.frozen.id in narrowed and scene.mover.id not in narrowed, narrowed
    assert len(narrowed) < len(everyone)
    for cell in browser.find_elements(By.CSS_SELECTOR, "table#devices tr[data-device-id] td.state"):
        assert "stalled" in cell.text, cell.text
    screenshot(browser, "3-devices-stalled")

    try:
        link = browser.find_element(By.CSS_SELECTOR, frozen_row + " a[href*='/service/devices/']")
        link.click()
    except NoSuchElementException:
        browser.get(base + "/service/devices/" + scene.frozen.id)
    eventually(lambda: urllib.parse.unquote(browser.current_url).endswith("/service/devices/" + scene.frozen.id),
               "the device's page open", deadline=30)
    wait_for(browser, "table#device-tables")
    wait_for(browser, "svg#lag-chart")
    wait_for(browser, "#device-errors")
    assert "todoitem" in browser.find_element(By.CSS_SELECTOR, "table#device-tables").text
    assert "stalled" in browser.find_element(By.CSS_SELECTOR, "table#device-tables").text
    screenshot(browser, "4-device")
