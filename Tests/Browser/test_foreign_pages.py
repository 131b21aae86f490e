"""A page on another site cannot write into the table service: its forms and simple fetches are
refused, nothing is stored and no column is added."""
import http.server
import json
import threading
import time
import urllib.parse
import urllib.request

from selenium.webdriver.common.by import By


def service_rows(service):
    request = urllib.request.Request(
        service + "/tables/todoitem?$top=1000&__includeDeleted=true", headers={"ZUMO-API-VERSION": "2.0.0"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def open_foreign_page(browser, html):
    """Opens `html` as a page of no site (a data: URL, origin "null") and lets its script run."""
    browser.get("data:text/html;charset=utf-8," + urllib.parse.quote(html))
    time.sleep(1.0)


def test_forms_and_simple_fetches_from_another_page_write_nothing(demo, browser):
    before = service_rows(demo.service)
    for enctype in ("application/x-www-form-urlencoded", "text/plain", "multipart/form-data"):
        open_foreign_page(browser, """
            <form method="post" action="%s/tables/todoitem" enctype="%s">
              <input name="text" value="forged by a form"><input name="injected" value="column">
            </form>
            <script>document.forms[0].submit()</script>""" % (demo.service, enctype))
        assert "are refused" in browser.page_source, enctype
    open_foreign_page(browser, """
        <script>
          fetch("%s/tables/todoitem", {method: "POST", mode: "no-cors",
                headers: {"Content-Type": "text/plain"}, body: '{"text": "forged by fetch", "injected": 1}'});
        </script>""" % demo.service)
    after = service_rows(demo.service)
    assert len(after) == len(before)
    assert all("injected" not in row for row in after)
    assert not any("forged" in str(row.get("text")) for row in after)


def serve_page_on_another_port(html):
    """Serves `html` as another local web app would: from 127.0.0.1 on a port of its own."""
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_json_write_from_another_local_app_is_refused(demo, browser):
    """Same host, another port: another origin. Its preflight gets no CORS answer, so the write
    never reaches the service."""
    before = service_rows(demo.service)
    server = serve_page_on_another_port("""
        <p id="result">pending</p>
        <script>
          fetch("%s/tables/todoitem", {method: "POST",
                headers: {"Content-Type": "application/json", "ZUMO-API-VERSION": "2.0.0"},
                body: JSON.stringify({text: "forged by another local app"})})
            .then(r => { document.getElementById("result").textContent = "answered " + r.status; })
            .catch(() => { document.getElementById("result").textContent = "blocked"; });
        </script>""" % demo.service)
    try:
        browser.get("http://127.0.0.1:%d/" % server.server_address[1])
        result = browser.find_element(By.ID, "result")
        deadline = time.time() + 10
        while time.time() < deadline and result.text == "pending":
            time.sleep(0.2)
        assert result.text == "blocked"
    finally:
        server.shutdown()
    after = service_rows(demo.service)
    assert len(after) == len(before)
    assert not any("forged" in str(row.get("text")) for row in after)


def test_every_demo_server_refuses_a_foreign_host_name(demo):
    import http.client
    for base in (demo.a, demo.b, demo.service):
        host, port = urllib.parse.urlparse(base).hostname, urllib.parse.urlparse(base).port
        for name, expected in (("evil.example", 421), ("localhost", 200)):
            connection = http.client.HTTPConnection(host, port, timeout=10)
            path = "/tables/todoitem" if base == demo.service else "/"
            connection.request("GET", path, headers={"Host": "%s:%d" % (name, port), "ZUMO-API-VERSION": "2.0.0"})
            status = connection.getresponse().status
            connection.close()
            assert status == expected, (base, name, status)
