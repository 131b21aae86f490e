"""The Doctor page against real binaries: all green on `todosync serve`, red with the exchange shown
escaped on a service that lies, and Cancel on one that never answers; at 1280 and 390 px, light and
dark, axe-clean, and with JavaScript off."""
import http.server
import json
import os
import signal
import subprocess
import tempfile
import threading
import time

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import BIN, make_browser, start
from dashboard import open_page, wait_for
from test_pages import SHOTS, check

LIE = '<script>alert("doctor")</script>'


@pytest.fixture
def setup():
    """A table service, and a dashboard syncing with it."""
    folder = tempfile.mkdtemp(prefix="todosync-doctor-")
    serve, url = start(["serve", "--port", "0", "--database", os.path.join(folder, "service.sqlite")],
                       r"(http://127\.0\.0\.1:\d+)")
    dashboard, base = start(["dashboard", "--port", "0", "--data-dir", os.path.join(folder, "dashboard"),
                             "--remote", url], r"(http://127\.0\.0\.1:\d+)")
    yield url, base
    for process in (dashboard, serve):
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


class FakeService:
    """A table service in this process: `lying` answers every GET with a row whose id holds a
    script; otherwise it reads the request and never answers until stopped."""

    def __init__(self, lying):
        release = self.release = threading.Event()
        arrived = self.arrived = threading.Event()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                arrived.set()
                if not lying:
                    release.wait(60)
                    return
                body = json.dumps([{"id": LIE, "version": "MQ==", "updatedAt": "2026-11-21T23:02:54.020Z"}]).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.release.set()
        self.server.shutdown()


def run_doctor(driver, base, url=None, read_only=False):
    """Fills the Doctor form (the address prefilled unless `url`) and submits it; returns at the run page."""
    open_page(driver, base + "/doctor")
    if url is not None:
        field = driver.find_element(By.ID, "doctor-url")
        field.clear()
        field.send_keys(url)
    if read_only:
        driver.find_element(By.NAME, "readOnly").click()
    driver.find_element(By.CSS_SELECTOR, "form[action='/doctor'] button[type=submit]").click()
    WebDriverWait(driver, 10).until(lambda d: "/doctor/runs/" in d.current_url)


def summary(driver, timeout=30):
    """The run's summary, once the run has ended (the page reloads itself until then)."""
    return WebDriverWait(driver, timeout).until(
        lambda d: (d.find_elements(By.CSS_SELECTOR, "[data-field=doctor-summary]") or [None])[0]).text


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "nojs"])
def test_doctor_is_green_on_serve_and_red_with_the_lie_escaped(setup, javascript):
    url, base = setup
    driver = make_browser(javascript)
    liar = FakeService(lying=True)
    try:
        open_page(driver, base + "/settings")
        driver.find_element(By.LINK_TEXT, "Run the protocol doctor").click()
        wait_for(driver, "#doctor-url")
        assert driver.find_element(By.ID, "doctor-url").get_attribute("value") == url
        run_doctor(driver, base)
        assert "9 green, 0 red" in summary(driver)
        assert len(driver.find_elements(By.CSS_SELECTOR, "[data-outcome=green]")) == 9
        green = driver.current_url

        run_doctor(driver, base, url=liar.url, read_only=True)
        assert "red" in summary(driver)
        red = driver.find_element(By.CSS_SELECTOR, "[data-check=filter]")
        assert red.get_attribute("data-outcome") == "red"
        assert "ignores $filter" in red.text
        assert "GET /tables/todoitem?$filter=" in red.text
        assert LIE in red.text  # shown as text...
        assert not driver.find_elements(By.CSS_SELECTOR, "main script")  # ...never as markup
        assert driver.find_element(By.CSS_SELECTOR, "[data-check=if-match]").get_attribute("data-outcome") == "not run"

        if javascript:
            os.makedirs(SHOTS, exist_ok=True)
            problems = []
            for width in (1280, 390):
                driver.set_window_size(width, 900)
                for name, page in (("doctor", base + "/doctor"), ("doctor-green", green),
                                   ("doctor-red", driver.current_url)):
                    problems += check(driver, name, page, width)
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                   {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
            problems += check(driver, "doctor-red", driver.current_url, 390, scheme="dark")
            assert not problems, "\n".join(problems)
    finally:
        liar.stop()
        driver.quit()


def test_cancel_stops_a_doctor_run_waiting_for_an_answer(setup):
    _, base = setup
    driver = make_browser(False)
    silent = FakeService(lying=False)
    try:
        run_doctor(driver, base, url=silent.url)
        # The page reloads itself each second while the run lasts: a click may meet a page on its way out.
        WebDriverWait(driver, 10, ignored_exceptions=(Exception,)).until(
            lambda d: d.find_element(By.XPATH, "//button[text()='Cancel']").click() or True)
        assert "Cancelled" in summary(driver, timeout=10) or "cancelled" in summary(driver, timeout=10)
        assert not driver.find_elements(By.XPATH, "//button[text()='Cancel']")
    finally:
        silent.stop()
        driver.quit()


def doctor(*args):
    return subprocess.run([BIN, "doctor"] + list(args), capture_output=True, text=True, timeout=120)


def test_doctor_command_exit_status_says_green_red_or_stopped(setup):
    url, _ = setup
    green = doctor(url, "--json")
    assert green.returncode == 0, green.stdout + green.stderr
    report = json.loads(green.stdout)
    assert [result["verdict"]["outcome"] for result in report["results"]] == ["passed"] * 9

    liar = FakeService(lying=True)
    try:
        red = doctor(liar.url, "--read-only")
    finally:
        liar.stop()
    assert red.returncode == 3, red.stdout + red.stderr
    assert "✗ filter" in red.stdout and "> GET /tables/todoitem?$filter=" in red.stdout

    started = time.time()
    gone = doctor("http://127.0.0.1:1")
    assert gone.returncode == 1 and "unreachable" in gone.stdout
    assert time.time() - started < 10


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_doctor_command_stops_on_a_signal(sig):
    silent = FakeService(lying=False)
    try:
        process = subprocess.Popen([BIN, "doctor", silent.url], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, start_new_session=True)
        assert silent.arrived.wait(30)
        started = time.time()
        process.send_signal(sig)
        _, errors = process.communicate(timeout=30)
        assert process.returncode == 0 and "Cancelled" in errors
        assert time.time() - started < 5
    finally:
        silent.stop()
