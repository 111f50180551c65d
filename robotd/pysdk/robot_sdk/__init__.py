"""SDK for robot apps: the RobotApp base class and the Robot client of the robot daemon."""

from .app import RobotApp
from .errors import DaemonUnavailableError, RequestRefusedError, RobotError
from .pose import HeadPose, create_head_pose
from .robot import DEFAULT_DAEMON_URL, SAMPLE_RATE, Robot
from .settings import HTTPError, Request, SettingsApp

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
    "HTTPError",
    "HeadPose",
    "Request",
    "RequestRefusedError",
    "Robot",
    "RobotApp",
    "RobotError",
    "SAMPLE_RATE",
    "SettingsApp",
    "create_head_pose",
    "__version__",
]
