"""SettingsApp served by WebUI: routing, JSON answers and errors (no daemon needed)."""

import contextlib
import http.client
import io
import json
import socket
import tempfile
import unittest
import urllib.error
import urllib.request
from pathlib import Path

from robot_sdk import HTTPError, SettingsApp
from robot_sdk.webui import MAX_BODY_BYTES, WebUI

from .daemon import free_port


class SettingsAppTest(unittest.TestCase):
    def setUp(self):
        static = Path(tempfile.mkdtemp())
        (static / "index.html").write_text("<p>settings</p>")
        self.app = SettingsApp()
        self.port = free_port()
        self.ui = WebUI(f"http://127.0.0.1:{self.port}", static, self.app)
        self.ui.start()
        self.addCleanup(self.ui.stop)
        self.base = f"http://127.0.0.1:{self.port}"

    def call(self, method, path, body=None, headers=None):
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(req) as r:
                raw = r.read()
                return r.status, (json.loads(raw) if raw else None), r.headers
        except urllib.error.HTTPError as e:
            raw = e.read()
            is_json = e.headers.get("Content-Type") == "application/json"
            return e.code, (json.loads(raw) if raw and is_json else raw), e.headers

    def test_routes_with_and_without_a_request(self):
        @self.app.get("/ping")
        def ping():
            return {"pong": True}

        @self.app.post("/echo/{name}")
        def echo(request):
            return {"name": request.path_params["name"], "json": request.json, "q": request.query.get("q")}

        self.assertEqual(self.call("GET", "/ping")[:2], (200, {"pong": True}))
        self.assertEqual(self.call("POST", "/echo/bob?q=1", {"a": [1, 2]})[:2],
                         (200, {"name": "bob", "json": {"a": [1, 2]}, "q": "1"}))
        self.assertEqual(self.call("POST", "/echo/bob")[:2], (200, {"name": "bob", "json": None, "q": None}))

    def test_status_tuples_none_and_lists(self):
        @self.app.post("/created")
        def created():
            return {"id": 1}, 201

        @self.app.delete("/thing")
        def remove():
            return None

        @self.app.get("/list")
        def listing():
            return [1, 2]

        self.assertEqual(self.call("POST", "/created")[:2], (201, {"id": 1}))
        self.assertEqual(self.call("DELETE", "/thing")[:2], (204, None))
        self.assertEqual(self.call("GET", "/list")[:2], (200, [1, 2]))

    def test_errors(self):
        @self.app.post("/strict")
        def strict(request):
            if request.json.get("ok") is not True:
                raise HTTPError(409, "not ok")
            return {"ok": True}

        @self.app.post("/buggy")
        def buggy():
            raise KeyError("missing")

        @self.app.get("/unencodable")
        def unencodable():
            return {"x": object()}

        self.assertEqual(self.call("POST", "/strict", {"ok": False})[:2], (409, {"detail": "not ok"}))
        status, body, _ = self.call("POST", "/strict", b"{not json")
        self.assertEqual(status, 400)
        self.assertIn("not JSON", body["detail"])
        with contextlib.redirect_stderr(io.StringIO()) as log:
            self.assertEqual(self.call("POST", "/buggy")[:2], (500, {"detail": "KeyError: 'missing'"}))
        self.assertIn("Traceback", log.getvalue())
        status, body, _ = self.call("GET", "/unencodable")
        self.assertEqual(status, 500)
        self.assertIn("not JSON", body["detail"])
        status, body, headers = self.call("GET", "/strict")
        self.assertEqual((status, headers["Allow"]), (405, "POST"))
        self.assertEqual(self.call("POST", "/nowhere")[:2], (404, {"detail": "no route POST /nowhere"}))
        conn = http.client.HTTPConnection("127.0.0.1", self.port)
        self.addCleanup(conn.close)
        conn.putrequest("POST", "/strict")
        conn.putheader("Content-Length", str(MAX_BODY_BYTES + 1))
        conn.endheaders()
        self.assertEqual(conn.getresponse().status, 413)

    def test_cross_site_posts_are_refused(self):
        @self.app.post("/danger")
        def danger():
            return {"done": True}

        self.assertEqual(self.call("POST", "/danger", headers={"Sec-Fetch-Site": "cross-site"})[0], 403)
        self.assertEqual(self.call("POST", "/danger", headers={"Origin": "http://evil.example"})[0], 403)
        self.assertEqual(self.call("POST", "/danger", headers={"Sec-Fetch-Site": "same-origin"})[0], 200)
        self.assertEqual(self.call("POST", "/danger", headers={"Origin": self.base})[0], 200)

    def test_hosts_other_than_this_machine_are_refused(self):
        @self.app.get("/ping")
        def ping():
            return {"pong": True}

        for host in ("evil.example", "evil.example:8042", "robot.attacker.net"):
            status, body, _ = self.call("GET", "/ping", headers={"Host": host})
            self.assertEqual(status, 421, host)
            self.assertIn("is not served here", body["detail"])
        for host in (f"127.0.0.1:{self.port}", "localhost", "[::1]:80", "192.168.1.20:8042", socket.gethostname()):
            self.assertEqual(self.call("GET", "/ping", headers={"Host": host})[0], 200, host)

    def test_static_files_behind_the_routes(self):
        with urllib.request.urlopen(self.base + "/") as r:
            self.assertEqual(r.read(), b"<p>settings</p>")
        self.assertEqual(self.call("GET", "/missing.css")[0], 404)

    def test_bad_route_path(self):
        with self.assertRaises(ValueError):
            self.app.get("no-slash")(lambda: None)


if __name__ == "__main__":
    unittest.main()
