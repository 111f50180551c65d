"""The app's web UI: the routes of its SettingsApp and its static files, on the address of ``custom_app_url``."""

import functools
import ipaddress
import json
import os
import socket
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


def allowed_hosts(url_host: str) -> frozenset:
    """The names the web UI answers to besides IP addresses: localhost, the machine's name (and
    name.local), the host of custom_app_url, and those in $ROBOT_APP_ALLOWED_HOSTS (comma-separated)."""
    names = {"localhost", url_host.lower()}
    name = socket.gethostname().lower()
    if name:
        names |= {name, name + ".local"}
    names |= {h.strip().lower().rstrip(".") for h in os.environ.get("ROBOT_APP_ALLOWED_HOSTS", "").split(",") if h.strip()}
    return frozenset(names)


def host_allowed(host_header: str, allowed: frozenset) -> bool:
    """Whether a Host header names this machine: an IP address or an allowed name (a DNS-rebinding guard)."""
    host = host_header.strip()
    if host.startswith("["):
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    host = host.lower().rstrip(".")
    if not host:
        return True
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        return host in allowed


class _Handler(SimpleHTTPRequestHandler):
    """Routes first, then files from the static directory; errors are JSON ``{"detail": ...}``.

    Requests whose Host is not this machine are refused (421), so that a web page cannot reach the
    app through DNS rebinding; state-changing requests from pages of other sites are refused (403).
    """

    settings_app: SettingsApp = SettingsApp()
    allowed: frozenset = frozenset({"localhost"})
    server_version = "robot_sdk"

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        host = self.headers.get("Host", "")
        if not host_allowed(host, self.allowed):
            self._send_json(421, {"detail": f"Host {host} is not served here: use the robot's IP address or name"})
            return False
        return True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - signature of the base class
        pass

    def end_headers(self) -> None:
        # Apps take turns on the same port: a browser must not show one app's page for another.
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def translate_path(self, path: str) -> str:
        # The anchor's apps serve static/ at /static/ as well as at the root.
        parts = urllib.parse.urlsplit(path)
        if parts.path.startswith("/static/"):
            path = parts.path[len("/static"):]
        return super().translate_path(path)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        if not self._route("GET"):
            super().do_GET()

    def do_HEAD(self) -> None:  # noqa: N802
        if not self._route("HEAD"):
            super().do_HEAD()

    def _send_response_object(self, resp: Any) -> None:
        body = resp.body if isinstance(resp.body, bytes) else bytes(resp.body)
        self.send_response(int(resp.status_code))
        media = getattr(resp, "media_type", None)
        headers = dict(getattr(resp, "headers", {}) or {})
        if media and not any(k.lower() == "content-type" for k in headers):
            self.send_header("Content-Type", media)
        for k, v in headers.items():
            if k.lower() != "content-length":
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

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
        except Exception as e:
            if isinstance(getattr(e, "status_code", None), int) and hasattr(e, "detail"):
                # FastAPI's or Starlette's HTTPException, from an app that imports them.
                status, body = e.status_code, {"detail": e.detail}
            else:  # a bug in the app's route: answer 500, keep serving
                traceback.print_exc(file=sys.stderr)
                status, body = 500, {"detail": f"{type(e).__name__}: {e}"}
        if hasattr(body, "status_code") and hasattr(body, "body"):
            self._send_response_object(body)
            return True
        try:
            self._send_json(status, body)
        except TypeError as e:  # the route returned something json cannot encode
            self._send_json(500, {"detail": f"route {method} {route.path} returned a value that is not JSON: {e}"})
        return True


class WebUI:
    """Serves a SettingsApp's routes and ``static_dir`` on the host and port of ``url`` in a background thread."""

    def __init__(self, url: str, static_dir: Path, settings_app: Optional[SettingsApp] = None,
                 loopback_only: bool = False) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname or not parsed.port:
            raise ValueError(f"custom_app_url must be http://host:port, got {url!r}")
        self.host = parsed.hostname
        # Apps name the wildcard address (http://0.0.0.0:8042) so that their page is reachable on a
        # robot the network can reach. When the daemon itself listens on loopback only (a laptop,
        # the Lite robot), that would open the app's page, and its POST routes, to every network the
        # machine is on: serve it on loopback like the daemon.
        if loopback_only and self.host in ("0.0.0.0", "::"):
            self.host = "127.0.0.1" if self.host == "0.0.0.0" else "::1"
        self.port = parsed.port
        self.static_dir = Path(static_dir)
        self.settings_app = settings_app if settings_app is not None else SettingsApp()
        self._server: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    def start(self) -> None:
        """Start serving; raises OSError when the port is taken."""
        handler_class = type("AppHandler", (_Handler,), {"settings_app": self.settings_app,
                                                         "allowed": allowed_hosts(self.host)})
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
