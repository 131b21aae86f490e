"""`todosync demo --port P` listens where the README says (A on P, B on P+1, the service on P+2),
`--port 0` on three free ports it prints, and a port in use stops it with a message naming the port
(which the fixtures' error shows, with the exit status)."""
import json
import socket
import subprocess
import tempfile
import urllib.request

import pytest

from conftest import BIN, Launch, StartError, demo_addresses, start_on_free_ports


def answers(url):
    with urllib.request.urlopen(url + "/api/status", timeout=10) as answer:
        return answer.status == 200 and "csrfToken" in json.load(answer)


def test_demo_listens_on_the_port_given_and_the_next_two():
    folder = tempfile.mkdtemp(prefix="todosync-demo-ports-")
    launch, urls, port = start_on_free_ports(
        lambda port: ["demo", "--port", str(port), "--data-dir", folder, "--auto-sync", "0"],
        demo_addresses, "its three addresses", count=3)
    try:
        assert urls == {"device A": "http://127.0.0.1:%d" % port, "device B": "http://127.0.0.1:%d" % (port + 1),
                        "service": "http://127.0.0.1:%d" % (port + 2)}
        assert answers(urls["device A"]) and answers(urls["device B"])
    finally:
        launch.kill()


def test_demo_on_port_0_prints_three_free_ports_that_answer(demo):
    ports = {int(url.rsplit(":", 1)[1]) for url in (demo.a, demo.b, demo.service)}
    assert len(ports) == 3 and 0 not in ports
    assert answers(demo.a) and answers(demo.b)
    with urllib.request.urlopen(demo.service + "/tables/todoitem", timeout=10) as answer:
        assert answer.status == 200


def test_a_port_in_use_stops_the_demo_naming_the_port_and_the_start_error_says_so():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        busy = taken.getsockname()[1]
        folder = tempfile.mkdtemp(prefix="todosync-demo-busy-")
        # The service listens first, on --port + 2: the port held here.
        launch = Launch(["demo", "--port", str(busy - 2), "--data-dir", folder, "--auto-sync", "0"])
        with pytest.raises(StartError) as raised:
            launch.wait_for(demo_addresses, "its three addresses", deadline=60)
    error = raised.value
    assert error.status == 64 and error.port_taken
    assert "127.0.0.1:%d" % busy in error.output and "--port 0" in error.output
    assert "exited with status 64" in str(error) and "Cannot listen on" in str(error)


def test_a_bad_port_is_refused_naming_the_flag():
    done = subprocess.run([BIN, "demo", "--port", "65534"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 64
    assert "--port must be between 1 and 65533, or 0" in done.stderr
