"""settings_app is a FastAPI application served by uvicorn on custom_app_url (no daemon needed)."""

import json
import socket
import tempfile
import threading
import unittest
import urllib.error
import urllib.request
from pathlib import Path

from robot_sdk import HTTPError, HTTPException
from robot_sdk.webui import MAX_BODY_BYTES, WebUI, new_settings_app

from .daemon import free_port


class SettingsAppTest(unittest.TestCase):
    def setUp(self):
        static = Path(tempfile.mkdtemp())
        (static / "index.html").write_text("<p>settings</p>")
        (static / "main.js").write_text("console.log(1)")
        self.app = new_settings_app(static)
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"

    def serve(self):
        self.ui = WebUI(self.base, self.app)
        self.ui.start()
        self.addCleanup(self.ui.stop)

    def call(self, method, path, body=None, headers=None):
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        hdrs = {"Content-Type": "application/json"} if data is not None else {}
        hdrs.update(headers or {})
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req) as r:
                raw = r.read()
                ctype = r.headers.get("Content-Type", "")
                return r.status, (json.loads(raw) if raw and "json" in ctype else raw), r.headers
        except urllib.error.HTTPError as e:
            raw = e.read()
            return e.code, (json.loads(raw) if raw and "json" in e.headers.get("Content-Type", "") else raw), e.headers

    def post_oversized(self, path, size):
        """POST a body of size bytes and return the status. The guard answers 413 from the headers
        and closes the connection, which may break the pipe while the body is still being sent:
        the answer is read all the same, as a browser reads it."""
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        self.addCleanup(conn.close)
        conn.putrequest("POST", path)
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(size))
        conn.endheaders()
        try:
            conn.send(b"x" * size)
        except (BrokenPipeError, ConnectionResetError):
            pass
        return conn.getresponse().status

    def test_a_pydantic_route_as_the_public_template_writes_it(self):
        from pydantic import BaseModel

        class AntennaState(BaseModel):
            enabled: bool

        seen = []

        @self.app.post("/antennas")
        def update(state: AntennaState):
            seen.append(state.enabled)
            return {"antennas_enabled": state.enabled}

        @self.app.post("/play_sound")
        async def play():  # an async route is awaited, not answered with a coroutine
            return {"queued": True}

        self.serve()
        self.assertEqual(self.call("POST", "/antennas", {"enabled": False})[:2], (200, {"antennas_enabled": False}))
        status, body, _ = self.call("POST", "/antennas", {"enabled": "sometimes"})
        self.assertEqual(status, 422)
        self.assertEqual(body["detail"][0]["loc"], ["body", "enabled"])
        self.assertEqual(self.call("POST", "/play_sound")[:2], (200, {"queued": True}))
        self.assertEqual(seen, [False])

    def test_routes_added_while_serving(self):
        # The public template defines its routes inside run(), after the server started.
        self.serve()
        self.assertEqual(self.call("GET", "/late")[0], 404)

        @self.app.get("/late/{n}")
        def late(n: int, q: str = "x"):
            return {"n": n, "q": q}

        self.assertEqual(self.call("GET", "/late/3?q=y")[:2], (200, {"n": 3, "q": "y"}))
        self.assertEqual(self.call("GET", "/late/three")[0], 422)

    def test_errors_static_files_and_no_cache(self):
        @self.app.post("/speed")
        def speed(body: dict):
            if body.get("speed", 0) <= 0:
                raise HTTPError(422, "speed: a positive number")
            return {"speed": body["speed"]}

        @self.app.get("/teapot")
        def teapot():
            raise HTTPException(status_code=418, detail="short and stout")

        self.serve()
        self.assertEqual(self.call("POST", "/speed", {"speed": -1})[:2], (422, {"detail": "speed: a positive number"}))
        self.assertEqual(self.call("GET", "/teapot")[:2], (418, {"detail": "short and stout"}))
        status, body, headers = self.call("GET", "/")
        self.assertEqual((status, body), (200, b"<p>settings</p>"))
        self.assertEqual(headers["Cache-Control"], "no-store")
        self.assertEqual(self.call("GET", "/static/main.js")[:2], (200, b"console.log(1)"))
        self.assertEqual(self.call("GET", "/main.js")[:2], (200, b"console.log(1)"))
        self.assertEqual(self.call("GET", "/../../etc/passwd")[0], 404)
        self.assertEqual(self.call("GET", "/nothing")[:2], (404, {"detail": "Not Found"}))

    def test_websocket_route(self):
        from fastapi import WebSocket

        @self.app.websocket("/ws")
        async def echo(ws: WebSocket):
            await ws.accept()
            await ws.send_text("hello " + await ws.receive_text())
            await ws.close()

        self.serve()
        # A websocket handshake and one text frame each way, by hand: the test needs no client library.
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as s:
            s.sendall(b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                      b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            head = b""
            while b"\r\n\r\n" not in head:
                head += s.recv(1024)
            self.assertIn(b"101", head.split(b"\r\n")[0])
            payload, mask = b"robot", b"\x01\x02\x03\x04"
            s.sendall(bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
            frame = head.split(b"\r\n\r\n", 1)[1]
            while len(frame) < 2 or len(frame) < 2 + frame[1]:
                frame += s.recv(1024)
            self.assertEqual(frame[2:2 + frame[1]], b"hello robot")

    def test_the_guard_refuses_rebinding_cross_site_and_large_bodies(self):
        hits = []

        @self.app.post("/move")
        def move(body: dict):
            hits.append(body)
            return {"ok": True}

        self.serve()
        self.assertEqual(self.call("POST", "/move", {}, {"Host": "evil.example"})[0], 421)
        self.assertEqual(self.call("POST", "/move", {}, {"Origin": "https://evil.example"})[0], 403)
        self.assertEqual(self.call("POST", "/move", {}, {"Sec-Fetch-Site": "cross-site"})[0], 403)
        self.assertEqual(self.post_oversized("/move", MAX_BODY_BYTES + 1), 413)
        self.assertEqual(self.call("POST", "/move", {"a": 1}, {"Origin": self.base})[:2], (200, {"ok": True}))
        self.assertEqual(hits, [{"a": 1}])

    def test_a_port_in_use_is_an_error_and_stop_frees_it(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen(1)
            ui = WebUI(f"http://127.0.0.1:{taken.getsockname()[1]}", self.app)
            with self.assertRaises(OSError):
                ui.start()
        self.serve()
        self.ui.stop()
        with socket.socket() as again:
            again.bind(("127.0.0.1", self.port))

    def test_concurrent_requests(self):
        @self.app.get("/n/{i}")
        def n(i: int):
            return {"i": i}

        self.serve()
        results = []
        threads = [threading.Thread(target=lambda i=i: results.append(self.call("GET", f"/n/{i}")[1]["i"])) for i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(sorted(results), list(range(20)))


if __name__ == "__main__":
    unittest.main()
