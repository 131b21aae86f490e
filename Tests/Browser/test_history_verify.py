"""A row's history and Verify, as a person uses them in the demo's two devices: the conflict page
leads to the history, which explains the conflict and then the decision; Verify lists a row changed
on the service with its reason and links it to its history. With JavaScript on and off; the pages
fit 1280 and 390 px, light and dark, axe-clean."""
import json
import os
import subprocess
import tempfile
import time
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import BIN
from dashboard import enhanced, flash_text, open_page, sync, wait_for
from test_pages import SHOTS, check
from test_tutorial import make_conflict


def explanation(driver):
    return wait_for(driver, ".explanation .lead").text


def test_the_conflict_page_leads_to_a_history_that_explains_it(demo, browsers):
    a, b = browsers
    _, text_b, conflict_url = make_conflict(demo, a, b)
    b.find_element(By.LINK_TEXT, "How it got here").click()
    assert "met a newer copy on the service" in explanation(b)
    titles = [element.text for element in b.find_elements(By.CSS_SELECTOR, ".history-event .badge")]
    # Sync pushes, then pulls: the page finds the change waiting and leaves the row alone.
    assert titles == ["Pulled", "Local edit", "Conflict", "Pulled, left alone"], titles
    assert text_b in b.find_element(By.CSS_SELECTOR, ".history-event:nth-child(2)").text
    history_url = b.current_url

    b.find_element(By.LINK_TEXT, "Resolve the conflict").click()
    wait_for(b, "table.compare")
    b.find_element(By.CSS_SELECTOR, "button[value='use-server']").click()
    flash_text(b, "Use Server")
    open_page(b, history_url)
    assert explanation(b).startswith("Use Server by a person at ")
    assert b.find_elements(By.CSS_SELECTOR, ".history-event .badge")[-1].text == "Decided: Use Server"
    b.find_element(By.LINK_TEXT, "In the journal").click()
    wait_for(b, ".journal-entry, .card")
    assert "/journal?item=" in b.current_url

    if enhanced(b):
        os.makedirs(SHOTS, exist_ok=True)
        problems = []
        for width in (1280, 390):
            b.set_window_size(width, 900)
            problems += check(b, "history", history_url, width)
        b.execute_cdp_cmd("Emulation.setEmulatedMedia",
                          {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        problems += check(b, "history", history_url, 390, scheme="dark")
        assert not problems, "\n".join(problems)


def patch_on_service(service, item_id, changes):
    request = urllib.request.Request(
        "%s/tables/todoitem/%s" % (service, item_id), data=json.dumps(changes).encode(), method="PATCH",
        headers={"ZUMO-API-VERSION": "2.0.0", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 200


def gone(element):
    """Whether `element` left the document (Chromium says so in more than one way)."""
    try:
        element.is_enabled()
        return False
    except Exception:
        return True


def verify(driver, base):
    """Presses Verify now and waits for the result (the page reloads itself while it runs; without
    JavaScript too: a meta refresh)."""
    open_page(driver, base + "/verify")
    button = driver.find_element(By.XPATH, "//button[text()='Verify now']")
    button.click()
    # The page that was clicked may still be there (with the last result): wait for the next one.
    WebDriverWait(driver, 10).until(lambda d: gone(button))
    WebDriverWait(driver, 30, ignored_exceptions=(Exception,)).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, ".verify-table")
        and not d.find_elements(By.XPATH, "//button[text()='Cancel']"))
    return "\n".join(table.text for table in driver.find_elements(By.CSS_SELECTOR, ".verify-table"))


def test_verify_lists_a_row_changed_on_the_service_with_its_reason(demo, browsers):
    a, _ = browsers
    sync(a, demo.a)
    open_page(a, demo.a + "/settings")
    a.find_element(By.LINK_TEXT, "Verify it").click()
    wait_for(a, "main h1")
    assert "No verify has run" in a.page_source
    result = verify(a, demo.a)
    assert "todoitem: 4 local rows, 4 on the service (deleted included); they match." in result, result
    assert "orders:" in result and "differ" not in result, "every synced table, the demo's orders too"

    with urllib.request.urlopen(demo.a + "/api/data/todoitem", timeout=10) as answer:
        item = json.load(answer)["items"][0]
    patch_on_service(demo.service, item["id"], {"text": "changed on the service"})
    result = verify(a, demo.a)
    assert "todoitem: 4 local rows, 4 on the service (deleted included); 1 row differs, with a reason." in result, result
    assert "changed on the service after the last pull" in result
    a.find_element(By.LINK_TEXT, item["id"]).click()
    assert explanation(a)  # the row's history opens from the difference

    if enhanced(a):
        problems = []
        for width in (1280, 390):
            a.set_window_size(width, 900)
            problems += check(a, "verify", demo.a + "/verify", width)
        a.execute_cdp_cmd("Emulation.setEmulatedMedia",
                          {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
        problems += check(a, "verify", demo.a + "/verify", 390, scheme="dark")
        assert not problems, "\n".join(problems)


def test_client_history_prints_the_sentence_and_the_events():
    folder = tempfile.mkdtemp(prefix="todosync-history-")
    store = os.path.join(folder, "phone.sqlite")

    def client(*args):
        done = subprocess.run([BIN, "client", "--store", store] + list(args),
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done.stdout

    client("add", "milk", "--id", "m1")
    client("edit", "m1", "--text", "oat milk")
    text = client("history", "m1")
    assert text.startswith("Your edit (text) of ") and "waits in the queue" in text
    assert "Local insert" in text and 'text = "oat milk"' in text
    history = json.loads(client("history", "m1", "--json"))
    assert [event["kind"] for event in history["events"]] == ["local-insert", "local-update"]
    started = time.time()
    missing = subprocess.run([BIN, "client", "--store", store, "--table", "nosuch", "history", "x"],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0 and "nosuch" in missing.stderr
    assert time.time() - started < 30
