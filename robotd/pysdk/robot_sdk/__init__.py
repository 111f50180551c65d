"""SDK for robot apps: the RobotApp base class and the Robot client of the robot daemon.

Its surface is the anchor SDK's (reachy_mini) under our names: ``RobotApp`` for ``ReachyMiniApp``,
``Robot`` for ``ReachyMini``, ``robot_sdk`` for ``reachy_mini`` (``robot_sdk.utils``,
``robot_sdk.utils.interpolation``, ``robot_sdk.motion.move``, ``robot_sdk.media``).
"""

from .app import RobotApp
from .errors import DaemonUnavailableError, RequestRefusedError, RobotError
from .media import Frame, Media, MediaUnavailableError
from .motion.move import Move
from .pose import create_head_pose
from .robot import DEFAULT_DAEMON_URL, SAMPLE_RATE, Robot
from .utils.interpolation import InterpolationTechnique

_LAZY = ("HTMLResponse", "HTTPError", "HTTPException", "JSONResponse", "Request", "Response", "SettingsApp")


def __getattr__(name: str):  # noqa: ANN202 - the module's lazy names: FastAPI's, imported on use
    if name in _LAZY:
        from .settings import lazy_name

        return lazy_name(name)
    raise AttributeError(f"module 'robot_sdk' has no attribute {name!r}")


try:
    from importlib.metadata import PackageNotFoundError, version

    try:
        __version__ = version("robot-sdk")
    except PackageNotFoundError:
        __version__ = "0.0.0"
except ImportError:  # pragma: no cover
    __version__ = "0.0.0"

__all__ = [
    "DEFAULT_DAEMON_URL",
    "DaemonUnavailableError",
    "Frame",
    "HTMLResponse",
    "HTTPError",
    "HTTPException",
    "InterpolationTechnique",
    "JSONResponse",
    "Media",
    "MediaUnavailableError",
    "Move",
    "Request",
    "RequestRefusedError",
    "Response",
    "Robot",
    "RobotApp",
    "RobotError",
    "SAMPLE_RATE",
    "SettingsApp",
    "create_head_pose",
    "__version__",
]
