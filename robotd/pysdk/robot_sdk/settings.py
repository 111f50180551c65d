"""SettingsApp: the routes of an app's web UI, declared with decorators and answered as JSON."""

import inspect
import re
from typing import Any, Callable, Dict, List, Optional, Tuple

Handler = Callable[..., Any]


class HTTPError(Exception):
    """Raise from a route to answer ``status`` with ``{"detail": detail}``."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"{status} {detail}")
        self.status = status
        self.detail = detail


class Request:
    """What a route gets when its function takes an argument.

    ``json`` is the decoded JSON body (None when there is none), ``query`` the query parameters
    (last value wins), ``path_params`` the ``{name}`` parts of the route's path, ``headers`` the
    request headers (a case-insensitive mapping).
    """

    def __init__(self, method: str, path: str, query: Dict[str, str], headers: Any, json: Any,
                 path_params: Dict[str, str]) -> None:
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.json = json
        self.path_params = path_params


_PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class _Route:
    def __init__(self, method: str, path: str, func: Handler) -> None:
        if not path.startswith("/"):
            raise ValueError(f"route path must start with '/', got {path!r}")
        self.method = method
        self.path = path
        self.func = func
        pattern = ""
        last = 0
        for m in _PARAM.finditer(path):
            pattern += re.escape(path[last:m.start()]) + f"(?P<{m.group(1)}>[^/]+)"
            last = m.end()
        pattern += re.escape(path[last:])
        self.regex = re.compile("^" + pattern + "$")
        try:
            self.wants_request = len(inspect.signature(func).parameters) > 0
        except (TypeError, ValueError):  # builtins without a signature
            self.wants_request = False


class SettingsApp:
    """A small web application on which an app defines the routes of its web UI.

    Routes return a dict or a list (answered as JSON with 200), a ``(body, status)`` tuple, or None
    (204). A route function takes no argument or one: the :class:`Request`. Raise
    :class:`HTTPError` to answer an error as ``{"detail": ...}``. The package's ``static/`` files are
    served for every GET that no route matches::

        @self.settings_app.post("/antennas")
        def antennas(request):
            self.amplitude = float(request.json["amplitude"])
            return {"status": "ok", "amplitude": self.amplitude}
    """

    def __init__(self) -> None:
        self.routes: List[_Route] = []

    def route(self, method: str, path: str) -> Callable[[Handler], Handler]:
        """Register the decorated function for ``method`` on ``path`` (``{name}`` matches one segment)."""
        method = method.upper()

        def register(func: Handler) -> Handler:
            self.routes = [r for r in self.routes if not (r.method == method and r.path == path)]
            self.routes.append(_Route(method, path, func))
            return func

        return register

    def get(self, path: str) -> Callable[[Handler], Handler]:
        """Register a GET route."""
        return self.route("GET", path)

    def post(self, path: str) -> Callable[[Handler], Handler]:
        """Register a POST route."""
        return self.route("POST", path)

    def put(self, path: str) -> Callable[[Handler], Handler]:
        """Register a PUT route."""
        return self.route("PUT", path)

    def delete(self, path: str) -> Callable[[Handler], Handler]:
        """Register a DELETE route."""
        return self.route("DELETE", path)

    def match(self, method: str, path: str) -> Tuple[Optional[_Route], Dict[str, str], List[str]]:
        """The route for method and path with its path parameters, and the methods the path allows."""
        allowed: List[str] = []
        for r in self.routes:
            m = r.regex.match(path)
            if not m:
                continue
            if r.method == method or (method == "HEAD" and r.method == "GET"):
                return r, m.groupdict(), []
            allowed.append(r.method)
        return None, {}, allowed

    def call(self, route: _Route, request: Request) -> Tuple[int, Any]:
        """Run a route and return the status and the body to encode as JSON (None: no body)."""
        result = route.func(request) if route.wants_request else route.func()
        status = 200
        if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], int):
            result, status = result
        if result is None and status == 200:
            status = 204
        return status, result
