"""Pages that follow the store: two pages side by side, each change on one shows on the other
without a reload (every wait is on the other page's DOM, never a fixed sleep). Two tabs of one
dashboard, and two devices of `todosync demo` syncing by themselves."""
import json
import os
import signal
import tempfile
import urllib.parse
import urllib.request
import uuid

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from conftest import start
from dashboard import add_todo, edit_todo, flash_text, open_page, open_todo, sync, wait_for
from test_pages import serious_violations

LIVE_DEADLINE = 15  # a change shows within a second; the margin is for a loaded machine


def follow(driver, url):
    """Opens `url` and waits until its stream is open; marks the window to tell a reload apart."""
    open_page(driver, url)
    WebDriverWait(driver, LIVE_DEADLINE).until(
        lambda d: d.execute_script("return document.documentElement.dataset.live === 'open'"))
    driver.execute_script("window.notReloaded = true")


def still_the_same_page(driver):
    return driver.execute_script("return window.notReloaded === true")


def live_row(driver, text):
    """The list row that shows `text` (a todo's link or a Data page's cell), or None."""
    rows = driver.find_elements(
        By.XPATH, "//tr[@id][td[normalize-space()=%s] or td/a[normalize-space()=%s]]"
        % (json.dumps(text), json.dumps(text)))
    return rows[0] if rows else None


def wait_until(driver, condition, what):
    return WebDriverWait(driver, LIVE_DEADLINE, poll_frequency=0.05).until(condition, message=what)


def complete_on_list(driver, base, text):
    open_page(driver, base + "/")
    row = live_row(driver, text)
    row.find_element(By.CSS_SELECTOR, "button.check").click()
    WebDriverWait(driver, 10).until(
        lambda d: live_row(d, text).find_element(By.CSS_SELECTOR, "button.check").get_attribute("aria-checked")
        == "true")


def delete_from_editor(driver, base, text):
    open_todo(driver, base, text)
    wait_for(driver, "[name='field:text']")
    driver.find_element(By.XPATH, "//button[normalize-space()='Delete this todo']").click()
    WebDriverWait(driver, 10).until(expected_conditions.alert_is_present()).accept()
    assert "Deleted" in flash_text(driver, "Deleted")


@pytest.mark.parametrize("path", ["/", "/data/todoitem"])
def test_an_open_list_shows_another_tabs_add_edit_complete_and_delete(demo, pair, path):
    a, b = pair
    tag = uuid.uuid4().hex[:6]
    text, edited = "Live %s" % tag, "Live edited %s" % tag
    follow(b, demo.a + path)

    add_todo(a, demo.a, text)
    row = wait_until(b, lambda d: live_row(d, text), "B's list shows A's new todo")
    assert "live-changed" in row.get_attribute("class"), "a new row is marked for a moment"

    b.execute_script("arguments[0].focus()", row.find_element(By.CSS_SELECTOR, "button.check"))
    edit_todo(a, demo.a, text, edited)
    wait_until(b, lambda d: live_row(d, edited) and not live_row(d, text), "B's list shows A's edit")
    assert b.execute_script("return document.activeElement.matches('button.check') && arguments[0].contains("
                            "document.activeElement)", live_row(b, edited)), "the focus stays on the row's checkbox"

    complete_on_list(a, demo.a, edited)
    wait_until(b, lambda d: live_row(d, edited).find_element(By.CSS_SELECTOR, "button.check")
               .get_attribute("aria-checked") == "true", "B's list shows the todo done")

    delete_from_editor(a, demo.a, edited)
    wait_until(b, lambda d: live_row(d, edited) is None, "B's list drops the deleted todo")
    assert still_the_same_page(b), "B's page was never reloaded"


def test_the_header_counts_follow_without_a_reload(demo, pair):
    a, b = pair
    follow(b, demo.a + "/operations")
    add_todo(a, demo.a, "Counted %s" % uuid.uuid4().hex[:6])
    wait_until(b, lambda d: d.find_element(By.CSS_SELECTOR, '[data-field="pending"]').text == "1",
               "B's header counts the new change")
    wait_until(b, lambda d: d.find_elements(By.CSS_SELECTOR, "#live-queue tr[id]"),
               "B's queue shows the change")
    assert still_the_same_page(b)


def test_typing_in_an_editor_survives_a_change_from_another_tab(demo, pair):
    a, b = pair
    tag = uuid.uuid4().hex[:6]
    text = "Editing %s" % tag
    add_todo(a, demo.a, text)
    open_todo(b, demo.a, text)
    follow(b, b.current_url)
    field = wait_for(b, "[name='field:text']")
    field.clear()
    field.send_keys("Typed on B %s" % tag)

    edit_todo(a, demo.a, text, "Changed on A %s" % tag)
    notice = wait_until(b, lambda d: d.find_element(By.ID, "live-notice-record").is_displayed()
                        and d.find_element(By.ID, "live-notice-record"), "B's editor says the row changed")
    assert "changed on another device or tab" in notice.text
    assert b.find_element(By.NAME, "field:text").get_attribute("value") == "Typed on B %s" % tag
    assert still_the_same_page(b)
    assert serious_violations(b) == []

    notice.find_element(By.CSS_SELECTOR, "[data-live-load]").click()
    wait_until(b, lambda d: d.find_element(By.NAME, "field:text").get_attribute("value") == "Changed on A %s" % tag,
               "Load the new values shows A's text")
    assert not b.find_element(By.ID, "live-notice-record").is_displayed()


def test_an_editor_nobody_typed_in_takes_the_new_values(demo, pair):
    a, b = pair
    tag = uuid.uuid4().hex[:6]
    text = "Untouched %s" % tag
    add_todo(a, demo.a, text)
    open_todo(b, demo.a, text)
    follow(b, b.current_url)
    edit_todo(a, demo.a, text, "Renamed %s" % tag)
    wait_until(b, lambda d: d.find_element(By.NAME, "field:text").get_attribute("value") == "Renamed %s" % tag,
               "B's editor shows A's edit")
    assert still_the_same_page(b)


def service_patch(service, text, changes):
    """Changes the todo whose text is `text` directly on the table service (the tutorial's "other device")."""
    headers = {"ZUMO-API-VERSION": "2.0.0", "Content-Type": "application/json"}
    query = urllib.parse.urlencode({"$filter": "text eq '%s'" % text})
    with urllib.request.urlopen(urllib.request.Request(service + "/tables/todoitem?" + query, headers=headers)) as answer:
        item = json.load(answer)[0]
    request = urllib.request.Request(service + "/tables/todoitem/" + item["id"], data=json.dumps(changes).encode(),
                                     headers=headers, method="PATCH")
    urllib.request.urlopen(request).close()


def test_a_conflict_made_by_a_sync_shows_on_an_open_conflicts_page(demo, pair):
    a, b = pair
    tag = uuid.uuid4().hex[:6]
    text = "Contested %s" % tag
    add_todo(a, demo.a, text)
    assert "Pushed 1" in sync(a, demo.a)
    service_patch(demo.service, text, {"text": "Changed on the service %s" % tag})
    edit_todo(a, demo.a, text, "Changed here %s" % tag)
    follow(b, demo.a + "/conflicts")

    assert "1 conflict" in sync(a, demo.a)
    wait_until(b, lambda d: d.find_elements(By.CSS_SELECTOR, "#live-conflicts tr[data-conflict]"),
               "B's conflicts page shows the conflict")
    wait_until(b, lambda d: d.find_element(By.CSS_SELECTOR, '[data-field="conflicts"]').text == "1",
               "B's header counts it")
    assert still_the_same_page(b)


@pytest.fixture
def devices():
    """Devices A and B: two dashboards against one `todosync serve`, each syncing by itself every 5 s
    (and 3 s after an edit). Returns (A's address, B's address)."""
    folder = tempfile.mkdtemp(prefix="todosync-live-")
    serve, url = start(["serve", "--port", "0", "--database", os.path.join(folder, "service.sqlite")],
                       r"(http://127\.0\.0\.1:\d+)")
    processes = [serve]
    bases = []
    for name in ("a", "b"):
        process, base = start(["dashboard", "--port", "0", "--data-dir", os.path.join(folder, name), "--remote", url,
                               "--auto-sync", "5"], r"(http://127\.0\.0\.1:\d+)")
        processes.append(process)
        bases.append(base)
    yield bases[0], bases[1]
    for process in reversed(processes):
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def test_another_devices_edit_shows_on_an_open_list_once_synced(devices, pair):
    base_a, base_b = devices
    a, b = pair
    tag = uuid.uuid4().hex[:6]
    follow(b, base_b + "/")
    wait_until(b, lambda d: d.find_element(By.CSS_SELECTOR, '[data-field="followLabel"]').text
               in ("Live", "Polling every 5 s"), "B's header says how it follows")

    add_todo(a, base_a, "From A %s" % tag)
    WebDriverWait(b, 60, poll_frequency=0.05).until(lambda d: live_row(d, "From A %s" % tag),
                                                     "B's open list shows A's todo after the syncs")
    edit_todo(a, base_a, "From A %s" % tag, "Edited on A %s" % tag)
    WebDriverWait(b, 60, poll_frequency=0.05).until(lambda d: live_row(d, "Edited on A %s" % tag),
                                                     "B's open list shows A's edit after the syncs")
    assert still_the_same_page(b)


def api(base, method, path, body=None):
    """A dashboard's JSON surface, with its CSRF token."""
    with urllib.request.urlopen(base + "/api/status", timeout=10) as answer:
        token = json.load(answer)["csrfToken"]
    request = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", "X-CSRF-Token": token},
                                     method=method)
    with urllib.request.urlopen(request, timeout=30) as answer:
        text = answer.read()
    return json.loads(text) if text else None


def test_a_conflict_an_automatic_sync_meets_shows_on_the_devices_open_conflicts_page(devices, pair):
    base_a, base_b = devices
    a, b = pair
    tag = uuid.uuid4().hex[:6]
    item = api(base_a, "POST", "/api/data/todoitem", {"text": "Shared %s" % tag})
    api(base_a, "POST", "/api/sync")
    follow(b, base_b + "/")
    WebDriverWait(b, 60, poll_frequency=0.05).until(lambda d: live_row(d, "Shared %s" % tag),
                                                     "B pulled the todo by itself")
    # B edits offline; A edits and syncs; B back online pushes by itself and meets A's change.
    api(base_b, "POST", "/api/settings", {"offline": True})
    wait_until(b, lambda d: d.find_element(By.CSS_SELECTOR, '[data-field="followLabel"]').text == "Offline",
               "B's header says Offline")
    api(base_b, "PATCH", "/api/data/todoitem/" + item["id"], {"text": "B's version %s" % tag})
    follow(a, base_a + "/")
    api(base_a, "PATCH", "/api/data/todoitem/" + item["id"], {"text": "A's version %s" % tag})
    api(base_a, "POST", "/api/sync")
    WebDriverWait(a, 60, poll_frequency=0.05).until(
        lambda d: live_row(d, "A's version %s" % tag) and live_row(d, "A's version %s" % tag).find_elements(
            By.CSS_SELECTOR, ".badge-synced"), "A's open list shows its edit synced")
    follow(b, base_b + "/conflicts")
    api(base_b, "POST", "/api/settings", {"offline": False})
    WebDriverWait(b, 60, poll_frequency=0.05).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#live-conflicts tr[data-conflict]"),
        "B's open conflicts page shows the conflict its automatic sync met")
    assert "A's version %s" % tag in b.find_element(By.CSS_SELECTOR, "#live-conflicts").text
    assert still_the_same_page(b)
