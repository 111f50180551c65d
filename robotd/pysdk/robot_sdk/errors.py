"""Exceptions raised by the Robot client."""


class RobotError(Exception):
    """Base class of every error the SDK raises."""


class DaemonUnavailableError(RobotError):
    """The robot daemon cannot be reached (not running, wrong URL, or network down)."""


class RequestRefusedError(RobotError):
    """The daemon answered with an error: ``status`` is the HTTP status, ``detail`` its message."""

    def __init__(self, method: str, path: str, status: int, detail: str) -> None:
        super().__init__(f"{method} {path}: {status} {detail}")
        self.method = method
        self.path = path
        self.status = status
        self.detail = detail
