"""Offline mode, escaping of hostile text on every page, and the header's live counts."""
import uuid

from selenium.webdriver.common.by import By

from dashboard import add_todo, flash_text, header_count, open_page, sync, todo_texts

HOSTILE = "<img src=x onerror=alert(1)>"


def set_offline(driver, base, offline):
    open_page(driver, base + "/settings")
    driver.find_element(By.CSS_SELECTOR, "input[name=offline][value=%s]" % ("true" if offline else "false")).click()
    driver.find_element(By.XPATH, "//button[normalize-space()='Save settings']").click()
    assert "Settings saved" in flash_text(driver, "Settings saved")


def test_offline_mode_queues_edits_and_sends_them_later(demo, browser):
    text = "Offline %s" % uuid.uuid4().hex[:6]
    set_offline(browser, demo.a, True)
    add_todo(browser, demo.a, text)
    assert "Offline mode is on" in sync(browser, demo.a)
    assert header_count(browser, "pending") == 1
    browser.get(demo.service + "/service/tables/todoitem")
    assert text not in browser.page_source
    set_offline(browser, demo.a, False)
    assert "Pushed 1" in sync(browser, demo.a)
    assert header_count(browser, "pending") == 0
    browser.get(demo.service + "/service/tables/todoitem")
    assert text in browser.page_source


def test_hostile_text_is_shown_as_text_on_every_page(demo, browser):
    alerts = []
    add_todo(browser, demo.a, HOSTILE)
    sync(browser, demo.a)
    pages = ["/", "/operations", "/conflicts", "/settings", "/?q=" + HOSTILE]
    open_page(browser, demo.a + "/")
    browser.find_element(By.LINK_TEXT, HOSTILE).click()
    pages.append(browser.current_url.replace(demo.a, ""))
    for page in pages:
        open_page(browser, demo.a + page)
        assert not browser.find_elements(By.CSS_SELECTOR, "main img"), page
        try:
            alerts.append(browser.switch_to.alert.text)
        except Exception:
            pass
    assert HOSTILE in todo_texts(browser, demo.a)
    browser.get(demo.service + "/service/tables/todoitem")
    assert not browser.find_elements(By.CSS_SELECTOR, "img[src=x]")
    assert alerts == []


def test_header_counts_follow_the_queue(demo, browser):
    add_todo(browser, demo.a, "Count me %s" % uuid.uuid4().hex[:6])
    assert header_count(browser, "pending") == 1
    sync(browser, demo.a)
    assert header_count(browser, "pending") == 0
