"""RobotApp: an app run as the daemon runs it (python -u -m <app>.main), stopped with SIGINT."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
import urllib.error
import urllib.request
from pathlib import Path

from .daemon import SDK_ROOT, daemon, free_port

MAIN_BLOCK = '''
if __name__ == "__main__":
    app = {cls}()
    try:
        app.wrapped_run()
    except KeyboardInterrupt:
        app.stop()
    print("exited cleanly", flush=True)
'''

WAVE_APP = '''
import threading
import time

from robot_sdk import Robot, RobotApp


class WaveApp(RobotApp):
    custom_app_url = None

    def run(self, robot: Robot, stop_event: threading.Event) -> None:
        print("running", flush=True)
        sign = 1
        while not stop_event.is_set():
            robot.set_target(antennas=[0.5 * sign, -0.5 * sign])
            sign = -sign
            stop_event.wait(0.1)
        print("loop ended", flush=True)
''' + MAIN_BLOCK.format(cls="WaveApp")

DEAF_APP = '''
import threading
import time

from robot_sdk import RobotApp


class DeafApp(RobotApp):
    def run(self, robot, stop_event: threading.Event) -> None:
        print("running", flush=True)
        while True:  # never polls stop_event: only a second SIGINT ends it
            time.sleep(0.05)
''' + MAIN_BLOCK.format(cls="DeafApp")

CRASH_APP = '''
from robot_sdk import RobotApp


class CrashApp(RobotApp):
    def run(self, robot, stop_event) -> None:
        raise RuntimeError("the app broke")
''' + MAIN_BLOCK.format(cls="CrashApp")

WEB_APP = '''
import threading

from robot_sdk import HTTPError, RobotApp


class WebApp(RobotApp):
    custom_app_url = "http://127.0.0.1:{port}"

    def __init__(self) -> None:
        super().__init__()
        self.amplitude = 0.2

        @self.settings_app.post("/amplitude")
        def set_amplitude(body: dict):
            value = body.get("amplitude")
            if not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise HTTPError(422, "amplitude: a number between 0 and 1")
            self.amplitude = float(value)
            return {{"status": "ok", "amplitude": self.amplitude}}

    def run(self, robot, stop_event: threading.Event) -> None:
        @self.settings_app.get("/status")
        def status():
            return {{"amplitude": self.amplitude, "awake": robot.is_awake()}}

        print("running", flush=True)
        stop_event.wait()
''' + MAIN_BLOCK.format(cls="WebApp")


def listening_addresses(port: int) -> list:
    """The IPv4 addresses a TCP socket listens on at port, from /proc/net/tcp."""
    found = []
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            fields = line.split()
            addr, hexport = fields[1].split(":")
            if fields[3] == "0A" and int(hexport, 16) == port:  # 0A: LISTEN
                found.append(".".join(str(b) for b in reversed(bytes.fromhex(addr))))
    return found


class AppProcess:
    """An app package in a temporary directory, run with ``python -u -m <name>.main``."""

    def __init__(self, test: unittest.TestCase, name: str, source: str, static: dict = None) -> None:
        root = Path(tempfile.mkdtemp(prefix="robot-app-"))
        pkg = root / name
        (pkg / "static").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "main.py").write_text(textwrap.dedent(source))
        for file, text in (static or {}).items():
            (pkg / "static" / file).write_text(text)
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SDK_ROOT), str(root)]), ROBOT_DAEMON_URL=daemon().url)
        self.proc = subprocess.Popen([sys.executable, "-u", "-m", f"{name}.main"], cwd=root, env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        test.addCleanup(self.kill)
        self.lines = []

    def wait_line(self, text: str, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.lines.append(line.rstrip("\n"))
            if line.rstrip("\n") == text:
                return
        raise AssertionError(f"app did not print {text!r}; stdout {self.lines}, stderr {self.stderr()}")

    def interrupt_and_wait(self, timeout: float = 5) -> int:
        self.proc.send_signal(signal.SIGINT)
        return self.proc.wait(timeout=timeout)

    def rest(self) -> str:
        return self.proc.stdout.read()

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        return self.proc.stderr.read()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        self.proc.stderr.close()


class RobotAppTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = daemon()

    def test_sigint_sets_stop_event_and_the_loop_ends(self):
        app = AppProcess(self, "wave_app", WAVE_APP)
        app.wait_line("running")
        # Run outside the daemon, the app is an SDK client: its session is listed, no slot is held.
        status = self.daemon.get("/api/daemon/status")
        self.assertEqual(status["slot"]["state"], "free")
        self.assertEqual([s["kind"] for s in status["sessions"]], ["remote"])
        seen = set()
        deadline = time.monotonic() + 3
        while len(seen) < 2 and time.monotonic() < deadline:
            seen.add(tuple(self.daemon.get("/api/state/full")["target_antennas_position"]))
            time.sleep(0.03)
        self.assertIn((0.5, -0.5), seen)
        self.assertIn((-0.5, 0.5), seen)
        start = time.monotonic()
        self.assertEqual(app.interrupt_and_wait(), 0, app.stderr())
        self.assertLess(time.monotonic() - start, 1.0)
        self.assertEqual(app.rest().splitlines(), ["loop ended", "exited cleanly"])
        # wrapped_run closed the Robot: the session is gone and the slot is free.
        self.assertEqual(self.daemon.get("/api/daemon/status")["slot"]["state"], "free")

    def test_second_sigint_interrupts_an_app_that_does_not_poll(self):
        app = AppProcess(self, "deaf_app", DEAF_APP)
        app.wait_line("running")
        app.proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
        self.assertIsNone(app.proc.poll(), "the first SIGINT only sets stop_event")
        self.assertEqual(app.interrupt_and_wait(), 0, app.stderr())
        self.assertEqual(app.rest().splitlines(), ["exited cleanly"])
        self.assertEqual(self.daemon.get("/api/daemon/status")["slot"]["state"], "free")

    def test_an_exception_in_run_fails_the_app(self):
        app = AppProcess(self, "crash_app", CRASH_APP)
        self.assertEqual(app.proc.wait(timeout=10), 1)
        self.assertIn("RuntimeError: the app broke", app.stderr())
        self.assertEqual(self.daemon.get("/api/daemon/status")["slot"]["state"], "free")

    def test_web_ui_serves_routes_and_static_files(self):
        port = free_port()
        app = AppProcess(self, "web_app", WEB_APP.format(port=port),
                         static={"index.html": "<h1>Web app</h1>", "main.js": "console.log(1)"})
        app.wait_line("running")
        base = f"http://127.0.0.1:{port}"
        with urllib.request.urlopen(base + "/") as r:
            self.assertEqual(r.read().decode(), "<h1>Web app</h1>")
            self.assertEqual(r.headers["Cache-Control"], "no-store")
        with urllib.request.urlopen(base + "/main.js") as r:
            self.assertEqual(r.read().decode(), "console.log(1)")
        req = urllib.request.Request(base + "/amplitude", data=json.dumps({"amplitude": 0.7}).encode(),
                                     method="POST", headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req) as r:
            self.assertEqual(r.headers["Content-Type"], "application/json")
            self.assertEqual(json.loads(r.read()), {"status": "ok", "amplitude": 0.7})
        with urllib.request.urlopen(base + "/status") as r:  # a route added inside run()
            self.assertEqual(json.loads(r.read()), {"amplitude": 0.7, "awake": True})
        req = urllib.request.Request(base + "/amplitude", data=b'{"amplitude": 3}', method="POST",
                                     headers={"Content-Type": "application/json"})
        with self.assertRaises(urllib.error.HTTPError) as cm:
            urllib.request.urlopen(req)
        self.assertEqual(cm.exception.code, 422)
        self.assertEqual(json.loads(cm.exception.read()), {"detail": "amplitude: a number between 0 and 1"})
        self.assertEqual(app.interrupt_and_wait(), 0, app.stderr())
        with self.assertRaises(OSError):  # the port is released
            urllib.request.urlopen(base + "/", timeout=1)

    def test_web_ui_on_the_wildcard_address_stays_on_loopback_with_a_loopback_daemon(self):
        self.assertTrue(self.daemon.get("/api/daemon/status")["loopback_only"])
        port = free_port()
        app = AppProcess(self, "web_app", WEB_APP.replace("http://127.0.0.1:{port}", "http://0.0.0.0:{port}").format(port=port),
                         static={"index.html": "<h1>Web app</h1>"})
        app.wait_line("running")
        self.assertEqual(listening_addresses(port), ["127.0.0.1"])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/") as r:
            self.assertEqual(r.read().decode(), "<h1>Web app</h1>")
        self.assertEqual(app.interrupt_and_wait(), 0, app.stderr())

    def test_web_ui_keeps_the_wildcard_address_when_the_daemon_is_reachable_from_the_network(self):
        from robot_sdk.webui import WebUI

        self.assertEqual(WebUI("http://0.0.0.0:8042", None, loopback_only=False).host, "0.0.0.0")
        self.assertEqual(WebUI("http://0.0.0.0:8042", None, loopback_only=True).host, "127.0.0.1")
        self.assertEqual(WebUI("http://[::]:8042", None, loopback_only=True).host, "::1")
        self.assertEqual(WebUI("http://192.0.2.7:8042", None, loopback_only=True).host, "192.0.2.7")

    def test_web_ui_default_port_is_the_daemons(self):
        # Two daemons on one machine each give their app a page port of their own: the SDK serves
        # a page asked on the default 8042 there, and a port the app chose stays.
        from unittest import mock

        from robot_sdk.webui import WebUI

        with mock.patch.dict(os.environ, {"ROBOT_APP_WEB_PORT": "8043"}):
            self.assertEqual(WebUI("http://0.0.0.0:8042", None).port, 8043)
            self.assertEqual(WebUI("http://0.0.0.0:9123", None).port, 9123)
        with mock.patch.dict(os.environ, {"ROBOT_APP_WEB_PORT": ""}):
            self.assertEqual(WebUI("http://0.0.0.0:8042", None).port, 8042)

    def test_web_ui_port_in_use_is_a_clear_error(self):
        import socket

        with socket.socket() as busy:
            busy.bind(("127.0.0.1", 0))
            busy.listen()
            port = busy.getsockname()[1]
            app = AppProcess(self, "web_app", WEB_APP.format(port=port))
            self.assertEqual(app.proc.wait(timeout=10), 1)
            err = app.stderr()
        self.assertIn(f"cannot serve the web UI on custom_app_url http://127.0.0.1:{port}", err)


if __name__ == "__main__":
    unittest.main()
