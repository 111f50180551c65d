"""The names of FastAPI that app routes use, re-exported lazily: ``settings_app`` is a FastAPI
application, and ``from robot_sdk import HTTPException`` costs nothing until it is used.

``HTTPError(status, detail)`` is this SDK's earlier name for ``HTTPException(status_code, detail)``.
"""

from typing import Any

_FASTAPI_NAMES = {
    "HTTPException": ("fastapi", "HTTPException"),
    "Request": ("fastapi", "Request"),
    "Response": ("fastapi", "Response"),
    "JSONResponse": ("fastapi.responses", "JSONResponse"),
    "HTMLResponse": ("fastapi.responses", "HTMLResponse"),
    "PlainTextResponse": ("fastapi.responses", "PlainTextResponse"),
    "SettingsApp": ("fastapi", "FastAPI"),
}

_http_error: Any = None


def http_error_class() -> Any:
    """HTTPError: FastAPI's HTTPException taking (status, detail) as this SDK's first one did."""
    global _http_error
    if _http_error is None:
        from fastapi import HTTPException

        class HTTPError(HTTPException):
            """Raise from a route to answer ``status`` with ``{"detail": detail}``."""

            def __init__(self, status: int, detail: Any = None, headers: Any = None) -> None:
                super().__init__(status_code=status, detail=detail, headers=headers)
                self.status = status

        _http_error = HTTPError
    return _http_error


def lazy_name(name: str) -> Any:
    """The FastAPI object an SDK name stands for."""
    if name == "HTTPError":
        return http_error_class()
    module, attr = _FASTAPI_NAMES[name]
    import importlib

    return getattr(importlib.import_module(module), attr)


def __getattr__(name: str) -> Any:
    if name == "HTTPError" or name in _FASTAPI_NAMES:
        return lazy_name(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
