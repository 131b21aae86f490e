"""The Settings page moves a dashboard to another table service: with a change not yet pushed it
asks first (how many, push or discard, as plain forms), then the list holds exactly the new
service's todos (plus the pushed one)."""
import json
import os
import signal
import tempfile
import urllib.request
import uuid

import pytest
from selenium.webdriver.common.by import By

from conftest import make_browser, start
from dashboard import add_todo, flash_text, open_page, sync, todo_texts, wait_for


@pytest.fixture
def other_service():
    """A second `todosync serve` holding two todos of its own."""
    folder = tempfile.mkdtemp(prefix="todosync-switch-")
    process, url = start(["serve", "--port", "0", "--database", os.path.join(folder, "service.sqlite")],
                         r"(http://127\.0\.0\.1:\d+)")
    for text in ("theirs one", "theirs two"):
        request = urllib.request.Request(
            url + "/tables/todoitem", data=json.dumps({"text": text, "complete": False}).encode(),
            headers={"ZUMO-API-VERSION": "2.0.0", "Content-Type": "application/json"}, method="POST")
        assert urllib.request.urlopen(request, timeout=10).status == 201
    yield url
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


@pytest.mark.parametrize("javascript,choice", [(True, "push"), (False, "discard")])
def test_switching_with_a_pending_change_asks_then_holds_the_new_services_todos(
        demo, other_service, javascript, choice):
    driver = make_browser(javascript)
    try:
        synced = "Synced %s" % uuid.uuid4().hex[:6]
        mine = "Mine %s" % uuid.uuid4().hex[:6]
        add_todo(driver, demo.a, synced)
        assert "Pushed 1" in sync(driver, demo.a)
        add_todo(driver, demo.a, mine)

        open_page(driver, demo.a + "/settings")
        remote = driver.find_element(By.ID, "remote")
        remote.clear()
        remote.send_keys(other_service)
        driver.find_element(By.XPATH, "//button[normalize-space()='Save settings']").click()
        question = wait_for(driver, "#remote-switch")
        assert "1 change not yet pushed" in question.text
        for form in question.find_elements(By.CSS_SELECTOR, "form"):
            assert form.get_attribute("method") == "post"
            assert form.find_element(By.NAME, "_csrf").get_attribute("value")
        # Nothing moved yet.
        assert set(todo_texts(driver, demo.a)) >= {synced, mine}

        open_page(driver, demo.a + "/settings")
        remote = driver.find_element(By.ID, "remote")
        remote.clear()
        remote.send_keys(other_service)
        driver.find_element(By.XPATH, "//button[normalize-space()='Save settings']").click()
        wait_for(driver, "#remote-switch")
        label = "Push them to the new service" if choice == "push" else "Discard them"
        driver.find_element(By.XPATH, "//section[@id='remote-switch']//button[normalize-space()='%s']" % label).click()
        assert "Now syncing with" in flash_text(driver, "Now syncing with")

        result = sync(driver, demo.a)
        texts = todo_texts(driver, demo.a)
        expected = {"theirs one", "theirs two"} | ({mine} if choice == "push" else set())
        assert set(texts) == expected, result
        assert len(texts) == len(expected)
    finally:
        driver.quit()
