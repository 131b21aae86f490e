"""What a person does on a dashboard page, as small helpers for the tests."""
import time

from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait


def wait_for(driver, css, timeout=10):
    """The first element matching `css`, once the page shows it."""
    return WebDriverWait(driver, timeout).until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, css)))


def wait_for_text(driver, css, text, timeout=30):
    """The text of the first element matching `css`, once it contains `text`. A page being replaced
    (a form's answer still loading, a live update) is waited through: its old elements go stale."""
    def shows(d):
        try:
            found = d.find_element(By.CSS_SELECTOR, css).text
        except (NoSuchElementException, StaleElementReferenceException):
            return False
        except WebDriverException as error:
            # Found in the old page as the new one replaced it: ChromeDriver may say so this way
            # ("Node with given id does not belong to the document") rather than as stale.
            if "does not belong to the document" in str(error):
                return False
            raise
        return found if text in found else False
    return WebDriverWait(driver, timeout).until(shows)


def open_page(driver, url):
    driver.get(url)
    return driver


def flash_text(driver, expect=None, timeout=10):
    """The page's flash messages; with `expect`, waits (a form POST may still be loading) until
    they contain it, and returns what is there at the end."""
    deadline = time.time() + timeout
    while True:
        try:
            text = " ".join(element.text for element in driver.find_elements(By.CSS_SELECTOR, ".flash"))
        except Exception:  # the page changed under us
            text = ""
        if expect is None or expect in text or time.time() > deadline:
            return text
        time.sleep(0.1)


def add_todo(driver, base, text):
    open_page(driver, base + "/")
    field = driver.find_element(By.ID, "new-label")
    field.clear()
    field.send_keys(text)
    field.submit()
    assert "Added" in flash_text(driver, "Added")


def sync(driver, base, page="/"):
    """Presses Sync and waits for its result message. With JavaScript the page reloads by
    itself when the sync ends; without, the person reloads until the result shows."""
    open_page(driver, base + page)
    driver.find_element(By.CSS_SELECTOR, "[data-sync-button]").click()
    deadline = time.time() + 30
    while time.time() < deadline:
        time.sleep(0.3)
        text = flash_text(driver)
        if any(word in text for word in RESULT_WORDS):
            return text
        if not enhanced(driver):
            driver.refresh()
    raise AssertionError("sync did not finish; the page says: " + flash_text(driver))


RESULT_WORDS = ("Pushed", "Pulled", "unreachable", "Offline", "failed", "refused")


def enhanced(driver):
    """Whether the page's script ran (it marks the document)."""
    try:
        return driver.execute_script("return document.documentElement.dataset.enhanced === 'yes'") is True
    except Exception:
        return False


def todo_texts(driver, base):
    open_page(driver, base + "/")
    return [cell.text for cell in driver.find_elements(By.CSS_SELECTOR, "td.todo-text a")]


def open_todo(driver, base, text):
    open_page(driver, base + "/")
    driver.find_element(By.LINK_TEXT, text).click()


def edit_todo(driver, base, old_text, new_text):
    open_todo(driver, base, old_text)
    field = wait_for(driver, "[name='field:text']")
    field.clear()
    field.send_keys(new_text)
    driver.find_element(By.XPATH, "//main//button[normalize-space()='Save']").click()
    assert "locally" in flash_text(driver, "locally")


def header_count(driver, name):
    return int(driver.find_element(By.CSS_SELECTOR, '[data-field="%s"]' % name).text)
