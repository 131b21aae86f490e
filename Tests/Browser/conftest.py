"""Fixtures for the browser flows: a real `todosync demo` (one table service, two dashboards)
and headless Chromium driven by Selenium, with JavaScript on or off."""
import collections
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

os.environ.setdefault("SE_AVOID_STATS", "true")  # Selenium Manager must not try the network

BIN = os.environ.get("TODOSYNC_BIN") or os.path.join(
    os.path.dirname(__file__), "..", "..", ".build", "debug", "todosync")


# How long a todosync command may take to announce its address. The demo (debug build) takes 0.4 s
# when idle and 1.6 s at most in 300 starts beside two busy loops and heavy loopback traffic; a loaded
# CI machine can be far slower. A start that fails says why at once rather than at the deadline.
START_DEADLINE = 90


class StartError(RuntimeError):
    """A todosync command that did not announce its address: why (its exit status, or the deadline),
    with its output."""

    def __init__(self, args, reason, status, output):
        self.args_given, self.reason, self.status, self.output = args, reason, status, output
        super().__init__("todosync %s did not start: %s\n--- its output ---\n%s--- end of its output ---"
                         % (" ".join(args), reason, output or "(none)\n"))

    @property
    def port_taken(self):
        """Whether it could not listen on a port it was given (another program took it)."""
        return "Cannot listen on" in self.output


class Launch:
    """A todosync process whose output a thread of its own reads (so the process never blocks on a
    full pipe) and keeps, the last lines of it, for the error that says why a start failed."""

    def __init__(self, args):
        self.args = args
        self.process = subprocess.Popen([BIN] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        start_new_session=True)
        self.lines = collections.deque(maxlen=400)
        self.ended = False
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            with self.changed:
                self.lines.append(line)
                self.changed.notify_all()
        with self.changed:
            self.ended = True
            self.changed.notify_all()

    @property
    def output(self):
        with self.changed:
            return "".join(self.lines)

    def wait_for(self, find, what, deadline=START_DEADLINE):
        """Returns `find(lines)` once it is not None. Raises `StartError` (and stops the process) if
        the process ends first or `deadline` seconds pass."""
        until = time.monotonic() + deadline
        with self.changed:
            while True:
                found = find(list(self.lines))
                if found is not None:
                    return found
                left = until - time.monotonic()
                if self.ended or left <= 0:
                    break
                self.changed.wait(left)
        if self.ended:
            try:
                status = self.process.wait(timeout=10)
                reason = "it exited with status %d before announcing %s" % (status, what)
            except subprocess.TimeoutExpired:
                status, reason = None, "it closed its output before announcing %s" % what
        else:
            status = None
            reason = "no %s within %d s (the machine is loaded, or it hangs); stopped it" % (what, deadline)
        self.kill()
        raise StartError(self.args, reason, status, self.output)

    def kill(self):
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait(timeout=10)


def first_match(pattern):
    """A `find` for `Launch.wait_for`: the first group of the first line that matches `pattern`."""
    def find(lines):
        for line in lines:
            match = re.search(pattern, line)
            if match:
                return match.group(1)
        return None
    return find


def free_port_block(count=3):
    """A port P such that P .. P+count-1 were all free on 127.0.0.1 a moment ago. Another program
    may take one before the caller listens on it: prefer port 0 (`start`, the `demo` fixture), and
    retry with a fresh block when a port was taken (`start_on_free_ports`)."""
    for _ in range(200):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        if base + count > 65535:
            continue
        sockets = []
        try:
            for offset in range(count):
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", base + offset))
                sockets.append(s)
            return base
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    raise RuntimeError("no block of free ports")


def start(args, pattern):
    """Starts `todosync args` and waits for the first URL its output announces (the first group of
    `pattern`); returns the process and the URL. Give it `--port 0`: the port is then free for sure."""
    launch = Launch(args)
    return launch.process, launch.wait_for(first_match(pattern), "its address")


def start_on_free_ports(make_args, find, what, count=1, attempts=5):
    """Starts a command that must listen on given ports (`make_args(port)` for a block of `count`
    free ports) and waits for `find` (see `Launch.wait_for`). A port taken by another program between
    the probe and the listen (the command says "Cannot listen on") is tried again with a fresh block.
    Returns the launch, what `find` found, and the port."""
    for attempt in range(attempts):
        port = free_port_block(count)
        launch = Launch(make_args(port))
        try:
            return launch, launch.wait_for(find, what), port
        except StartError as error:
            if not error.port_taken or attempt == attempts - 1:
                raise


class Demo:
    def __init__(self, process, a, b, service):
        self.process, self.a, self.b, self.service = process, a, b, service


DEMO_ADDRESS = re.compile(r"(device A|device B|service)\s+(http://\S+?)/")


def demo_addresses(lines):
    """A `find` for `Launch.wait_for`: the demo's three addresses, once it printed them all."""
    urls = {}
    for line in lines:
        match = DEMO_ADDRESS.search(line)
        if match:
            urls[match.group(1)] = match.group(2)
    return urls if len(urls) == 3 else None


@pytest.fixture
def demo():
    """`todosync demo` on three ports the system picks (`--port 0`): no other program can take one
    between a probe and the listen."""
    folder = tempfile.mkdtemp(prefix="todosync-demo-")
    # Auto-sync off: the tutorial's flows press Sync themselves and count what it pushed.
    launch = Launch(["demo", "--port", "0", "--data-dir", folder, "--auto-sync", "0"])
    urls = launch.wait_for(demo_addresses, "its three addresses")
    yield Demo(launch.process, urls["device A"], urls["device B"], urls["service"])
    launch.kill()


def make_browser(javascript=True):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1200,900"):
        options.add_argument(flag)
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(30)
    return driver


@pytest.fixture(params=["js", "nojs"])
def browsers(request):
    """Two browsers (one per device), both with JavaScript on, or both with it off."""
    javascript = request.param == "js"
    a, b = make_browser(javascript), make_browser(javascript)
    yield a, b
    a.quit()
    b.quit()


@pytest.fixture
def browser():
    driver = make_browser(True)
    yield driver
    driver.quit()


@pytest.fixture
def pair():
    """Two browsers with JavaScript on: two devices, or two tabs, side by side."""
    a, b = make_browser(True), make_browser(True)
    yield a, b
    a.quit()
    b.quit()
