"""The app's web UI: ``settings_app``, a FastAPI application, served by uvicorn on the address of
``custom_app_url``, with the package's ``static/`` directory, as the public SDK serves it.

Around the app's routes, every request goes through a guard that the public SDK does not have and a
robot needs: a ``Host`` that does not name this machine is refused (421: a web page cannot reach the
app through DNS rebinding), a POST, PUT, PATCH or DELETE sent by a page of another site is refused
(403: a web page cannot drive the robot through the app), a body over ``MAX_BODY_BYTES`` is refused
(413), and no answer is cached (apps take turns on the same port).

FastAPI and uvicorn are imported when an app first uses its ``settings_app``: an app without a web UI
starts without them.
"""

import ipaddress
import os
import socket
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any, Optional

# Bodies larger than this are refused with 413.
MAX_BODY_BYTES = 1 << 20

_UNSAFE_METHODS = ("POST", "PUT", "PATCH", "DELETE")


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


def cross_site(headers: dict) -> bool:
    """A request a page of another site sent (what browsers mark as such)."""
    site = headers.get("sec-fetch-site")
    if site is not None:
        return site not in ("same-origin", "none")
    origin = headers.get("origin")
    if not origin:
        return False
    return urllib.parse.urlsplit(origin).netloc != headers.get("host", "")


def new_settings_app(static_dir: Optional[Path]) -> Any:
    """A FastAPI application as the public SDK makes one for an app: ``static/`` at ``/static``,
    its ``index.html`` at ``/``, and (ours) its other files at the root for GETs no route answers."""
    from fastapi import FastAPI
    from fastapi.responses import FileResponse, JSONResponse
    from fastapi.staticfiles import StaticFiles
    from starlette.exceptions import HTTPException as StarletteHTTPException

    app = FastAPI()
    if static_dir is not None and static_dir.is_dir():
        root = static_dir.resolve()
        app.mount("/static", StaticFiles(directory=str(root)), name="static")

        @app.exception_handler(StarletteHTTPException)
        async def static_fallback(request: Any, exc: Any) -> Any:
            # A GET that no route answers may be a file of static/ (index.html at /).
            if exc.status_code == 404 and request.method in ("GET", "HEAD"):
                rel = request.url.path.lstrip("/") or "index.html"
                path = (root / rel).resolve()
                if path.is_dir():
                    path = path / "index.html"
                if (path == root or root in path.parents) and path.is_file():
                    return FileResponse(str(path))
            return JSONResponse({"detail": exc.detail}, status_code=exc.status_code, headers=getattr(exc, "headers", None))

    return app


class _Guard:
    """The ASGI app uvicorn serves: the checks of the module's doc, then the app's own routes."""

    def __init__(self, app: Any, allowed: frozenset) -> None:
        self.app = app
        self.allowed = allowed

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host", "")
        if not host_allowed(host, self.allowed):
            await self._refuse(scope, send, 421, f"Host {host} is not served here: use the robot's IP address or name")
            return
        method = scope.get("method", "GET")
        if (method in _UNSAFE_METHODS or scope["type"] == "websocket") and cross_site(headers):
            await self._refuse(scope, send, 403, "cross-site request refused")
            return
        try:
            length = int(headers.get("content-length") or 0)
        except ValueError:
            length = 0
        if length > MAX_BODY_BYTES:
            await self._refuse(scope, send, 413, f"body larger than {MAX_BODY_BYTES} bytes")
            return

        async def send_no_store(message: dict) -> None:
            if message["type"] == "http.response.start":
                message = dict(message)
                message["headers"] = list(message.get("headers", [])) + [(b"cache-control", b"no-store")]
            await send(message)

        await self.app(scope, receive, send_no_store)

    @staticmethod
    async def _refuse(scope: dict, send: Any, status: int, detail: str) -> None:
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        import json

        body = json.dumps({"detail": detail}).encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


# The page port apps name by default (the public SDK's custom_app_url). A daemon gives its app a
# port of its own in ROBOT_APP_WEB_PORT (its --app-web-port: its port + 42 unless set), served in
# place of this one, so that two daemons on one machine running such apps do not collide.
DEFAULT_WEB_PORT = 8042
WEB_PORT_ENV = "ROBOT_APP_WEB_PORT"


def served_port(port: int) -> int:
    """The port a page asked on ``port`` is served on: the daemon's in place of the default."""
    given = os.environ.get(WEB_PORT_ENV, "")
    if port == DEFAULT_WEB_PORT and given.isdigit() and 0 < int(given) < 65536:
        return int(given)
    return port


class WebUI:
    """Serves a FastAPI app on the host and port of ``url`` with uvicorn in a background thread
    (the default port 8042 becomes the daemon's, see ``served_port``)."""

    def __init__(self, url: str, app: Any, loopback_only: bool = False) -> None:
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
        self.port = served_port(parsed.port)
        self.app = app
        self._server: Any = None
        self._thread: Optional[threading.Thread] = None

    @staticmethod
    def port_of(url: str) -> Optional[int]:
        """The port ``url`` names, or None."""
        try:
            return urllib.parse.urlsplit(url).port
        except ValueError:
            return None

    def start(self, timeout: float = 10.0) -> None:
        """Start serving; raises OSError when the port is taken. Returns once uvicorn serves."""
        import uvicorn

        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
            sock.listen(128)
        except OSError:
            sock.close()
            raise
        options = {"log_level": "warning", "lifespan": "off"}
        if _takes_graceful_timeout(uvicorn):  # uvicorn >= 0.25: open websockets do not hold the stop
            options["timeout_graceful_shutdown"] = 1
        config = uvicorn.Config(_Guard(self.app, allowed_hosts(self.host)), **options)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, name="web-ui", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.005)
        self._sock = sock

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._server is not None:
            self._server.should_exit = True
            if self._thread is not None:
                self._thread.join(timeout=5)
            self._sock.close()
            self._server = None


def _takes_graceful_timeout(uvicorn: Any) -> bool:
    import inspect

    return "timeout_graceful_shutdown" in inspect.signature(uvicorn.Config.__init__).parameters
