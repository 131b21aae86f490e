"""Fixtures for the browser flows: a real `todosync demo` (one table service, two dashboards)
and headless Chromium driven by Selenium, with JavaScript on or off."""
import os
import re
import signal
import socket
import subprocess
import tempfile
import time

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

os.environ.setdefault("SE_AVOID_STATS", "true")  # Selenium Manager must not try the network

BIN = os.environ.get("TODOSYNC_BIN") or os.path.join(
    os.path.dirname(__file__), "..", "..", ".build", "debug", "todosync")


def free_port_block(count=3):
    """A port P such that P .. P+count-1 are all free on 127.0.0.1."""
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
    """Starts `todosync args` and waits for the first URL its output announces."""
    process = subprocess.Popen([BIN] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               start_new_session=True)
    deadline = time.time() + 30
    while time.time() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        match = re.search(pattern, line)
        if match:
            return process, match.group(1)
    process.kill()
    raise RuntimeError("todosync %s did not start" % args[0])


class Demo:
    def __init__(self, process, a, b, service):
        self.process, self.a, self.b, self.service = process, a, b, service


@pytest.fixture
def demo():
    folder = tempfile.mkdtemp(prefix="todosync-demo-")
    port = free_port_block()
    process = subprocess.Popen(
        # Auto-sync off: the tutorial's flows press Sync themselves and count what it pushed.
        [BIN, "demo", "--port", str(port), "--data-dir", folder, "--auto-sync", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    urls = {}
    deadline = time.time() + 30
    while time.time() < deadline and len(urls) < 3:
        line = process.stdout.readline()
        if not line:
            break
        match = re.search(r"(device A|device B|service)\s+(http://\S+?)/", line)
        if match:
            urls[match.group(1)] = match.group(2)
    if len(urls) < 3:
        process.kill()
        raise RuntimeError("todosync demo did not start: %r" % urls)
    yield Demo(process, urls["device A"], urls["device B"], urls["service"])
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


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
