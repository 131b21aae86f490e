"""Quick complete from the list and the question before deleting, with JavaScript on and off."""
import uuid

from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from dashboard import add_todo, enhanced, flash_text, open_page, todo_texts, wait_for


def row_of(driver, text):
    return driver.find_element(By.XPATH, "//tr[td[contains(@class,'todo-text')]/a[normalize-space()='%s']]" % text)


def test_quick_complete_ticks_a_todo_from_the_list(demo, browsers):
    driver, _ = browsers
    text = "Quick %s" % uuid.uuid4().hex[:6]
    add_todo(driver, demo.a, text)
    open_page(driver, demo.a + "/")
    driver.execute_script("window.scrollTo(0, 200); window.stayedOnPage = true;")
    row_of(driver, text).find_element(By.CSS_SELECTOR, "button.check").click()
    if enhanced(driver):
        WebDriverWait(driver, 10).until(
            lambda d: row_of(d, text).find_element(By.CSS_SELECTOR, "button.check").get_attribute("aria-checked")
            == "true")
        assert driver.execute_script("return window.stayedOnPage === true"), "the page did not reload"
        assert "done" in row_of(driver, text).get_attribute("class")
    else:
        assert "Marked" in flash_text(driver, "Marked")
        assert driver.current_url.endswith("#" + row_of(driver, text).get_attribute("id"))
    open_page(driver, demo.a + "/?show=completed")
    assert row_of(driver, text).find_element(By.CSS_SELECTOR, "button.check").get_attribute("aria-checked") == "true"


def test_delete_asks_first(demo, browsers):
    driver, _ = browsers
    text = "Delete me %s" % uuid.uuid4().hex[:6]
    add_todo(driver, demo.a, text)
    open_page(driver, demo.a + "/")
    driver.find_element(By.LINK_TEXT, text).click()
    wait_for(driver, "[name='field:text']")
    scripted = enhanced(driver)
    driver.find_element(By.XPATH, "//button[normalize-space()='Delete this todo']").click()
    if scripted:
        alert = WebDriverWait(driver, 10).until(expected_conditions.alert_is_present())
        assert text in alert.text
        alert.dismiss()
        assert text in todo_texts(driver, demo.a), "dismissing the question keeps the todo"
        open_page(driver, demo.a + "/")
        driver.find_element(By.LINK_TEXT, text).click()
        wait_for(driver, "[name='field:text']")
        driver.find_element(By.XPATH, "//button[normalize-space()='Delete this todo']").click()
        WebDriverWait(driver, 10).until(expected_conditions.alert_is_present()).accept()
    else:
        WebDriverWait(driver, 10).until(lambda d: "Delete this todo?" in d.page_source)
        assert text in todo_texts(driver, demo.a), "the question alone deletes nothing"
        open_page(driver, demo.a + "/")
        driver.find_element(By.LINK_TEXT, text).click()
        wait_for(driver, "[name='field:text']")
        driver.find_element(By.XPATH, "//button[normalize-space()='Delete this todo']").click()
        WebDriverWait(driver, 10).until(lambda d: "Delete the todo" in d.page_source)
        driver.find_element(By.XPATH, "//button[normalize-space()='Delete the todo']").click()
    assert "Deleted" in flash_text(driver, "Deleted")
    assert text not in todo_texts(driver, demo.a)
