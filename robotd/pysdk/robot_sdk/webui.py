"""The app's web UI: static files served on the address of ``custom_app_url``."""

import functools
import threading
import urllib.parse
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Optional


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002 - signature of the base class
        pass


class WebUI:
    """Serves ``static_dir`` on the host and port of ``url`` in a background thread."""

    def __init__(self, url: str, static_dir: Path) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname or not parsed.port:
            raise ValueError(f"custom_app_url must be http://host:port, got {url!r}")
        self.host = parsed.hostname
        self.port = parsed.port
        self.static_dir = Path(static_dir)
        self._server: Optional[ThreadingHTTPServer] = None
        self._thread: Optional[threading.Thread] = None

    def start(self) -> None:
        """Start serving."""
        handler = functools.partial(_QuietHandler, directory=str(self.static_dir))
        self._server = ThreadingHTTPServer((self.host, self.port), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="web-ui", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
