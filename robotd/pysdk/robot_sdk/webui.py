"""The app's web UI: the routes of its SettingsApp and its static files, on the address of ``custom_app_url``."""

import functools
import json
import sys
import threading
import traceback
import urllib.parse
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Optional

from .settings import HTTPError, Request, SettingsApp

# Bodies larger than this are refused with 413.
MAX_BODY_BYTES = 1 << 20


class _Handler(SimpleHTTPRequestHandler):
    """Routes first, then files from the static directory; errors are JSON ``{"detail": ...}``."""

    settings_app: SettingsApp = SettingsApp()
    server_version = "robot_sdk"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - signature of the base class
        pass

    def end_headers(self) -> None:
        # Apps take turns on the same port: a browser must not show one app's page for another.
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if not self._route("GET"):
            super().do_GET()

    def do_HEAD(self) -> None:  # noqa: N802
        if not self._route("HEAD"):
            super().do_HEAD()

    def do_POST(self) -> None:  # noqa: N802
        self._route("POST", required=True)

    def do_PUT(self) -> None:  # noqa: N802
        self._route("PUT", required=True)

    def do_DELETE(self) -> None:  # noqa: N802
        self._route("DELETE", required=True)

    def _send_json(self, status: int, body: Any) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD" and data:
            self.wfile.write(data)

    def _cross_site(self) -> bool:
        """A state-changing request sent by a page of another site (what browsers mark as such)."""
        site = self.headers.get("Sec-Fetch-Site")
        if site is not None:
            return site not in ("same-origin", "none")
        origin = self.headers.get("Origin")
        if not origin:
            return False
        return urllib.parse.urlsplit(origin).netloc != self.headers.get("Host", "")

    def _route(self, method: str, required: bool = False) -> bool:
        url = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(url.path)
        route, params, allowed = self.settings_app.match(method, path)
        if route is None:
            if allowed:
                self.send_response(405)
                self.send_header("Allow", ", ".join(sorted(set(allowed))))
                self.send_header("Content-Type", "application/json")
                body = json.dumps({"detail": f"{method} is not allowed on {path}"}).encode()
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return True
            if required:
                self._send_json(404, {"detail": f"no route {method} {path}"})
                return True
            return False
        if method not in ("GET", "HEAD") and self._cross_site():
            self._send_json(403, {"detail": "cross-site request refused"})
            return True
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self._send_json(413, {"detail": f"body larger than {MAX_BODY_BYTES} bytes"})
            self.close_connection = True
            return True
        raw = self.rfile.read(length) if length > 0 else b""
        payload = None
        if raw.strip():
            try:
                payload = json.loads(raw)
            except ValueError as e:
                self._send_json(400, {"detail": f"body is not JSON: {e}"})
                return True
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
        request = Request(method, path, query, self.headers, payload, params)
        try:
            status, body = self.settings_app.call(route, request)
        except HTTPError as e:
            status, body = e.status, {"detail": e.detail}
        except Exception as e:  # a bug in the app's route: answer 500, keep serving
            traceback.print_exc(file=sys.stderr)
            status, body = 500, {"detail": f"{type(e).__name__}: {e}"}
        try:
            self._send_json(status, body)
        except TypeError as e:  # the route returned something json cannot encode
            self._send_json(500, {"detail": f"route {method} {route.path} returned a value that is not JSON: {e}"})
        return True


class WebUI:
    """Serves a SettingsApp's routes and ``static_dir`` on the host and port of ``url`` in a background thread."""

    def __init__(self, url: str, static_dir: Path, settings_app: Optional[SettingsApp] = None) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname or not parsed.port:
            raise ValueError(f"custom_app_url must be http://host:port, got {url!r}")
        self.host = parsed.hostname
        self.port = parsed.port
        self.static_dir = Path(static_dir)
        self.settings_app = settings_app if settings_app is not None else SettingsApp()
        self._server: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    def start(self) -> None:
        """Start serving; raises OSError when the port is taken."""
        handler_class = type("AppHandler", (_Handler,), {"settings_app": self.settings_app})
        handler = functools.partial(handler_class, directory=str(self.static_dir))
        self._server = ThreadingHTTPServer((self.host, self.port), handler)
        self._server.daemon_threads = True
        # A short poll interval: stopping the app waits for the serving loop to notice.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="web-ui", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
