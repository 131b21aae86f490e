"""Operating todosync: `/metrics` read by the Prometheus client's own text parser, and a support
bundle made by `todosync client bundle` opened with `todosync open-bundle` (read-only)."""
import os
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

from prometheus_client.parser import text_string_to_metric_families
from selenium.webdriver.common.by import By

from conftest import BIN, make_browser, start
from dashboard import add_todo, open_page, sync


def sample_names(url):
    with urllib.request.urlopen(url + "/metrics", timeout=10) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        text = answer.read().decode()
    names = set()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            names.add(sample.name)
            assert set(sample.labels) <= {"table", "kind", "outcome", "method", "status", "le", "state"}
    return names, text


def test_metrics_of_the_dashboard_and_the_service_parse_as_prometheus_text(demo, browser):
    add_todo(browser, demo.a, "metric me")
    sync(browser, demo.a)
    add_todo(browser, demo.a, "still queued")

    names, text = sample_names(demo.a)
    for name in ("todosync_pending_operations", "todosync_conflicts", "todosync_held_operations",
                 "todosync_syncs_total", "todosync_sync_duration_seconds_bucket",
                 "todosync_sync_duration_seconds_count", "todosync_pushed_operations_total",
                 "todosync_pulled_rows_total", "todosync_last_success_timestamp_seconds"):
        assert name in names, name
    assert "metric me" not in text and "still queued" not in text

    names, _ = sample_names(demo.service)
    for name in ("todosync_http_requests_total", "todosync_http_request_duration_seconds_bucket",
                 "todosync_rows"):
        assert name in names, name


def test_a_client_bundle_has_no_secrets_and_opens_read_only(demo):
    folder = tempfile.mkdtemp(prefix="todosync-bundle-")
    store = os.path.join(folder, "phone.sqlite")
    bundle = os.path.join(folder, "support.zip")
    key, token = "app-KEY-0123456789", "token-SECRET-987654321"
    client = [BIN, "client", "--store", store, "--remote", demo.service, "--app-key", key, "--auth-token", token]
    subprocess.run(client + ["add", "bundled todo"], check=True, capture_output=True)
    subprocess.run(client + ["push"], check=True, capture_output=True)
    subprocess.run(client + ["add", "queued in the bundle"], check=True, capture_output=True)
    made = subprocess.run([BIN, "client", "--store", store, "bundle", "--out", bundle],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    data = open(bundle, "rb").read()
    assert key.encode() not in data and token.encode() not in data

    browser = make_browser(javascript=False)  # the Sync form's own answer, not the script's
    process, url = start(["open-bundle", bundle, "--port", "0"], r"open (http://\S+?)/ ")
    try:
        open_page(browser, url + "/operations")
        assert "queued in the bundle" in browser.page_source
        open_page(browser, url + "/")
        assert "bundled todo" in browser.page_source
        browser.find_element(By.CSS_SELECTOR, "[data-sync-button]").click()
        deadline = time.time() + 10
        while "this is a read-only support bundle" not in browser.page_source and time.time() < deadline:
            time.sleep(0.1)
        assert "this is a read-only support bundle" in browser.page_source
        try:
            urllib.request.urlopen(urllib.request.Request(url + "/sync", data=b"", method="POST"), timeout=10)
            raise AssertionError("a POST was accepted")
        except urllib.error.HTTPError as error:
            assert error.code == 403
            assert "this is a read-only support bundle" in error.read().decode()
    finally:
        browser.quit()
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)


def test_open_bundle_refuses_a_file_that_is_not_a_bundle():
    folder = tempfile.mkdtemp(prefix="todosync-bundle-")
    path = os.path.join(folder, "notes.zip")
    with open(path, "w") as file:
        file.write("not a bundle")
    result = subprocess.run([BIN, "open-bundle", path, "--port", "0"], capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
    assert path in result.stderr and "not a todosync support bundle" in result.stderr
