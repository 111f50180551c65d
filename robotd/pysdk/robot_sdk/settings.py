"""SettingsApp: the routes of an app's web UI, declared with decorators as FastAPI's are.

A route function's parameters are filled as FastAPI fills them: a parameter named in the path
(``/items/{item_id}``) from the path, converted to its annotation (int, float, bool, str); one
annotated with a pydantic model (v1 or v2, used only when the app imports pydantic) from the JSON
body, validated (422 with pydantic's errors otherwise); one annotated ``dict`` or ``list`` with the
JSON body; one annotated :class:`Request` (or named ``request``) with the request; any other from
the query string, with its default when absent (422 when it has none). A route returns a dict, a
list, a pydantic model (answered as JSON with 200), ``(body, status)``, a :class:`Response`
(or a Starlette/FastAPI one), or None (204).
"""

import inspect
import json
import re
from typing import Any, Callable, Dict, List, Optional, Tuple, Union, get_args, get_origin

Handler = Callable[..., Any]


class HTTPError(Exception):
    """Raise from a route to answer ``status`` with ``{"detail": detail}``."""

    def __init__(self, status: int, detail: Any) -> None:
        super().__init__(f"{status} {detail}")
        self.status = status
        self.detail = detail


class HTTPException(HTTPError):
    """FastAPI's name and signature: ``HTTPException(status_code, detail)``."""

    def __init__(self, status_code: int, detail: Any = None, headers: Optional[dict] = None) -> None:
        super().__init__(status_code, detail)
        self.status_code = status_code
        self.headers = headers or {}


class Response:
    """A response with its own body and type, as FastAPI's Response."""

    media_type: Optional[str] = None

    def __init__(self, content: Any = b"", status_code: int = 200, media_type: Optional[str] = None,
                 headers: Optional[dict] = None) -> None:
        self.status_code = status_code
        if media_type is not None:
            self.media_type = media_type
        self.headers = dict(headers or {})
        self.body = self.render(content)

    def render(self, content: Any) -> bytes:
        """The body's bytes."""
        if content is None:
            return b""
        return content if isinstance(content, bytes) else str(content).encode()


class JSONResponse(Response):
    """A JSON response."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return json.dumps(content).encode()


class HTMLResponse(Response):
    """An HTML page."""

    media_type = "text/html; charset=utf-8"


class PlainTextResponse(Response):
    """Plain text."""

    media_type = "text/plain; charset=utf-8"


def is_model_class(obj: Any) -> bool:
    """A pydantic model class (v2's model_validate, or v1's parse_obj), found without importing pydantic."""
    if not inspect.isclass(obj):
        return False
    # v2 first: touching v1's __fields__ on a v2 model warns.
    return (hasattr(obj, "model_validate") and hasattr(obj, "model_fields")) or (hasattr(obj, "parse_obj") and hasattr(obj, "__fields__"))


def is_model(obj: Any) -> bool:
    """A pydantic model instance."""
    return not inspect.isclass(obj) and is_model_class(type(obj))


def model_to_json(obj: Any) -> Any:
    """A pydantic model as JSON data."""
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json")
    return json.loads(obj.json())


class _Invalid(Exception):
    """A request that does not fit a route's parameters: 422 with FastAPI's error list."""

    def __init__(self, errors: List[dict]) -> None:
        super().__init__(errors)
        self.errors = errors


def _convert(annotation: Any, value: str, loc: List[str]) -> Any:
    if get_origin(annotation) is Union:
        options = [a for a in get_args(annotation) if a is not type(None)]
        annotation = options[0] if len(options) == 1 else str
    try:
        if annotation is bool:
            if value.lower() in ("1", "true", "on", "yes"):
                return True
            if value.lower() in ("0", "false", "off", "no"):
                return False
            raise ValueError(value)
        if annotation in (int, float):
            return annotation(value)
    except ValueError:
        kind = annotation.__name__
        raise _Invalid([{"loc": loc, "msg": f"value is not a valid {kind}", "type": f"type_error.{kind}", "input": value}]) from None
    return value


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
            self.params = list(inspect.signature(func).parameters.values())
        except (TypeError, ValueError):  # builtins without a signature
            self.params = []

    def arguments(self, request: "Request") -> Dict[str, Any]:
        """The route function's keyword arguments for request, as FastAPI would give them."""
        kwargs: Dict[str, Any] = {}
        errors: List[dict] = []
        for p in self.params:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                continue
            ann = p.annotation
            if isinstance(ann, str):  # a postponed annotation: resolve it where the function lives
                ann = getattr(self.func, "__globals__", {}).get(ann, ann)
            try:
                if ann is Request or (ann is p.empty and p.name in ("request", "req")) or (
                        ann is p.empty and len(self.params) == 1 and p.name not in request.path_params and p.name not in request.query):
                    kwargs[p.name] = request
                elif p.name in request.path_params:
                    kwargs[p.name] = _convert(ann, request.path_params[p.name], ["path", p.name])
                elif is_model_class(ann):
                    kwargs[p.name] = _validate(ann, request.json)
                elif ann in (dict, list) or get_origin(ann) in (dict, list):
                    if request.json is None and p.default is p.empty:
                        raise _Invalid([{"loc": ["body"], "msg": "field required", "type": "value_error.missing"}])
                    kwargs[p.name] = request.json if request.json is not None else p.default
                elif p.name in request.query:
                    kwargs[p.name] = _convert(ann, request.query[p.name], ["query", p.name])
                elif p.default is not p.empty:
                    kwargs[p.name] = p.default
                else:
                    raise _Invalid([{"loc": ["query", p.name], "msg": "field required", "type": "value_error.missing"}])
            except _Invalid as e:
                errors.extend(e.errors)
        if errors:
            raise _Invalid(errors)
        return kwargs


def _validate(model: Any, data: Any) -> Any:
    """The JSON body as a pydantic model (v2 or v1), or _Invalid with pydantic's errors."""
    if data is None:
        raise _Invalid([{"loc": ["body"], "msg": "field required", "type": "value_error.missing"}])
    try:
        if hasattr(model, "model_validate"):
            return model.model_validate(data)
        return model.parse_obj(data)
    except Exception as e:  # pydantic's ValidationError, of whichever version the app uses
        if not hasattr(e, "errors"):
            raise
        errors = []
        for err in e.errors():
            err = dict(err)
            err["loc"] = ["body"] + [str(x) for x in err.get("loc", ())]
            err.pop("ctx", None)
            err.pop("url", None)
            if "input" in err:
                try:
                    json.dumps(err["input"])
                except (TypeError, ValueError):
                    err["input"] = str(err["input"])
            errors.append(err)
        raise _Invalid(errors) from None


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
        """Run a route and return the status and the body: JSON data, a Response, or None (no body).
        A request that does not fit the route's parameters answers 422 with FastAPI's errors."""
        try:
            kwargs = route.arguments(request)
        except _Invalid as e:
            return 422, {"detail": e.errors}
        result = route.func(**kwargs)
        status = 200
        if isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], int):
            result, status = result
        if is_model(result):
            result = model_to_json(result)
        elif isinstance(result, list):
            result = [model_to_json(r) if is_model(r) else r for r in result]
        if hasattr(result, "status_code") and hasattr(result, "body"):
            return int(result.status_code), result
        if result is None and status == 200:
            status = 204
        return status, result
