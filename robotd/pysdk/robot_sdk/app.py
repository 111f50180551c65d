"""RobotApp: the base class every robot app subclasses."""

import logging
import signal
import sys
import threading
import traceback
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Optional

from .robot import Robot


class RobotApp(ABC):
    """Base class of a robot app.

    Implement ``run(robot, stop_event)`` and poll ``stop_event`` to exit gracefully. The daemon runs
    the app as ``python -u -m <app>.main`` and stops it with SIGINT; the app's ``__main__`` block is::

        if __name__ == "__main__":
            app = MyApp()
            try:
                app.wrapped_run()
            except KeyboardInterrupt:
                app.stop()

    Set ``custom_app_url`` (e.g. ``"http://0.0.0.0:8042"``) to serve the app's web UI there with
    uvicorn: ``settings_app``, a FastAPI application (``@self.settings_app.post("/path")`` with
    pydantic models, websockets, everything FastAPI does), with the package's ``static/`` directory
    at ``/static`` and its ``index.html`` at ``/``; the daemon's dashboard then links to it. While the
    daemon listens on loopback only, a wildcard host (``0.0.0.0``, ``::``) is served on loopback too.
    """

    custom_app_url: Optional[str] = None
    # The anchor's class attributes: dont_start_webserver keeps the web UI off even with a
    # custom_app_url; request_media_backend is the media_backend the app's Robot gets.
    dont_start_webserver: bool = False
    request_media_backend: Optional[str] = None

    def __init__(self, running_on_wireless: bool = False) -> None:
        self.stop_event = threading.Event()
        self._settings_app: Any = None
        self.web_ui: Any = None
        self.error = ""
        self.running_on_wireless = running_on_wireless
        self.logger = logging.getLogger("robot_sdk.app")
        self.media_backend = self.request_media_backend or "default"

    @property
    def settings_app(self) -> Any:
        """The app's FastAPI application (made, and FastAPI imported, on first use)."""
        if self._settings_app is None:
            from .webui import new_settings_app

            self._settings_app = new_settings_app(self.static_dir())
        return self._settings_app

    @settings_app.setter
    def settings_app(self, app: Any) -> None:
        self._settings_app = app

    @abstractmethod
    def run(self, robot: Robot, stop_event: threading.Event) -> None:
        """The app's logic: runs until it returns or ``stop_event`` is set."""

    def stop(self) -> None:
        """Ask ``run`` to return by setting ``stop_event``."""
        self.stop_event.set()

    def static_dir(self) -> Path:
        """The ``static/`` directory next to the module that defines the app class."""
        module = sys.modules.get(type(self).__module__)
        base = Path(module.__file__).parent if module and getattr(module, "__file__", None) else Path.cwd()
        return base / "static"

    def wrapped_run(self, robot: Optional[Robot] = None, *args: Any, **kwargs: Any) -> None:
        """Connect a Robot (unless one is given; other arguments go to Robot()), start the web
        UI, and call run.

        While it runs, SIGINT sets ``stop_event`` instead of raising KeyboardInterrupt, so ``run``
        can finish its loop; a second SIGINT raises KeyboardInterrupt as usual.
        """
        previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, self._on_sigint)
        owned = robot is None
        try:
            if robot is None:
                # The daemon's status first, the session last: the web UI binds according to the
                # status, and is serving by the time the session makes the daemon say "running".
                kwargs.setdefault("media_backend", self.media_backend)
                robot = Robot(*args, open_session=False, **kwargs)
            if self.custom_app_url and not self.dont_start_webserver:
                from .webui import DEFAULT_WEB_PORT, WebUI, served_port

                status = getattr(robot, "daemon_status", None) or {}
                self.web_ui = WebUI(self.custom_app_url, self.settings_app,
                                    loopback_only=bool(status.get("loopback_only")))
                try:
                    self.web_ui.start()
                except OSError as e:
                    self.web_ui = None
                    port = WebUI.port_of(self.custom_app_url)
                    hint = ("change custom_app_url" if port != DEFAULT_WEB_PORT else
                            f"another daemon's app on this machine? the daemon serves it on port {served_port(port)}: "
                            "pick another with robot-daemon --app-web-port")
                    raise RuntimeError(
                        f"cannot serve the web UI on custom_app_url {self.custom_app_url}: {e} "
                        f"(is another program using the port? {hint})"
                    ) from e
            if owned:
                robot._open_session()
            self.run(robot, self.stop_event)
        except Exception:
            self.error = traceback.format_exc()
            raise
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
            if self.web_ui is not None:
                self.web_ui.stop()
            if owned and robot is not None:
                robot.close()

    def _on_sigint(self, signum, frame) -> None:
        if self.stop_event.is_set():
            raise KeyboardInterrupt
        self.stop()
