"""The Robot client: the robot daemon's HTTP API as Python calls."""

import asyncio
import http.client
import ipaddress
import json
import logging
import os
import socket
import threading
import time
import urllib.parse
import warnings
from enum import Enum
from typing import Any, List, Optional, Sequence, Tuple, Union

from .errors import DaemonUnavailableError, RequestRefusedError, RobotError
from .media import MAX_PUSH_SAMPLES, SAMPLE_RATE, Media
from .pose import as_pose_matrix, create_head_pose, pose_body, pose_from_wire

DEFAULT_DAEMON_URL = "http://127.0.0.1:8000"

__all__ = ["DEFAULT_DAEMON_URL", "MAX_PUSH_SAMPLES", "SAMPLE_RATE", "FaceTarget", "Robot"]

logger = logging.getLogger("robot_sdk")

# A head pose: a (4, 4) numpy array (or nested lists, or 16 numbers row by row).
PoseLike = Any


def _antennas(antennas: Any) -> list:
    if hasattr(antennas, "tolist"):
        antennas = antennas.tolist()
    try:
        values = [float(a) for a in antennas]
    except (TypeError, ValueError):
        raise ValueError("Antennas must be a list or 1D np array with two elements.") from None
    if len(values) != 2:
        raise ValueError("Antennas must be a list or 1D np array with two elements.")
    return values


# How long a request keeps trying while the daemon does not answer (a restart, a stall under load)
# before DaemonUnavailableError: an app rides out a short outage instead of dying of it.
DEFAULT_RECONNECT_GRACE = 15.0


def _reconnect_grace() -> float:
    try:
        return max(0.0, float(os.environ.get("ROBOT_SDK_RECONNECT_GRACE", DEFAULT_RECONNECT_GRACE)))
    except ValueError:
        return DEFAULT_RECONNECT_GRACE


DEFAULT_DAEMON_PORT = 8000
TOKEN_FILE_NAME = "api-token"
SOCKET_FILE_NAME = "daemon.sock"


def _is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _default_data_dirs() -> List[str]:
    """The robot daemon's default data dirs on this machine, as the daemon picks its own:
    $XDG_STATE_HOME/robot-daemon, ~/.local/state/robot-daemon, /var/lib/robot-daemon (the robot's)."""
    dirs = []
    if os.environ.get("XDG_STATE_HOME"):
        dirs.append(os.path.join(os.environ["XDG_STATE_HOME"], "robot-daemon"))
    home = os.path.expanduser("~")
    if home and home != "~":
        dirs.append(os.path.join(home, ".local", "state", "robot-daemon"))
    dirs.append("/var/lib/robot-daemon")
    return dirs


def _read_token_file(path: str) -> Optional[str]:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip() or None
    except OSError:
        return None


def _find_credentials(host: str, port: Optional[int]) -> Tuple[Optional[str], Optional[str]]:
    """The token to send, or the owner's unix socket to talk through, as Jupyter's and Docker's
    clients find theirs: ``$ROBOT_DAEMON_TOKEN`` (an app the daemon runs gets its own there); else
    the token file named by ``$ROBOT_DAEMON_TOKEN_FILE``; else, for a daemon on this machine at the
    default port, the owner's token file ``<data-dir>/api-token`` (mode 0600: readable by the
    daemon's user and root) of a default data dir, then its socket ``<data-dir>/daemon.sock``
    (``$ROBOT_DAEMON_SOCKET`` names another). A token is never read from a file for another machine."""
    token = os.environ.get("ROBOT_DAEMON_TOKEN") or None
    if token:
        return token, None
    token_file = os.environ.get("ROBOT_DAEMON_TOKEN_FILE") or None
    if token_file:
        token = _read_token_file(token_file)
        if token is None:
            logger.warning("ROBOT_DAEMON_TOKEN_FILE=%s cannot be read: no token is sent", token_file)
        return token, None
    if not _is_loopback_host(host):
        return None, None
    socket_path = os.environ.get("ROBOT_DAEMON_SOCKET") or None
    if socket_path:
        return None, socket_path
    if port != DEFAULT_DAEMON_PORT:  # another port (or http's 80) is not the default data dir's daemon
        return None, None
    for d in _default_data_dirs():
        token = _read_token_file(os.path.join(d, TOKEN_FILE_NAME))
        if token:
            return token, None
    for d in _default_data_dirs():
        path = os.path.join(d, SOCKET_FILE_NAME)
        if os.path.exists(path) and os.access(path, os.W_OK):
            return None, path
    return None, None


class _UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over the daemon's owner socket: the kernel tells the daemon who connected, no token."""

    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self._path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


class _Transport:
    """JSON over HTTP/1.1 with one persistent connection per thread. A request the daemon does not
    answer (refused, reset, timed out) is sent again, with growing pauses, for up to ``grace``
    seconds ($ROBOT_SDK_RECONNECT_GRACE, default 15); the robot's commands are targets and states,
    so a command sent twice leaves the robot where once would. ``token`` None finds the credentials
    (_find_credentials)."""

    def __init__(self, base_url: str, token: Optional[str], timeout: float, grace: Optional[float] = None) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"daemon URL must be http(s)://host[:port], got {base_url!r}")
        self.base_url = base_url
        self._scheme = parsed.scheme
        self._host = parsed.hostname
        self._port = parsed.port
        self._prefix = parsed.path.rstrip("/")
        self._socket: Optional[str] = None
        if token is None:
            token, socket_path = _find_credentials(self._host, self._port)
            if self._scheme == "http":  # the socket speaks plain HTTP
                self._socket = socket_path
        self._token = token
        self._timeout = timeout
        self.grace = _reconnect_grace() if grace is None else grace
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self._socket:
                conn = _UnixHTTPConnection(self._socket, self._timeout)
            else:
                cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
                conn = cls(self._host, self._port, timeout=self._timeout)
            self._local.conn = conn
        return conn

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def request(self, method: str, path: str, body: Any = None, query: Optional[dict] = None,
                grace: Optional[float] = None) -> Any:
        text = self.request_bytes(method, path, body, query, grace).decode("utf-8", "replace")
        if not text:
            return None
        return json.loads(text)

    def request_bytes(self, method: str, path: str, body: Any = None, query: Optional[dict] = None,
                      grace: Optional[float] = None) -> bytes:
        url = self._prefix + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        grace = self.grace if grace is None else grace
        first_failure: Optional[float] = None
        pause = 0.1
        attempt = 0
        while True:
            attempt += 1
            conn = self._connection()
            try:
                conn.request(method, url, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
                break
            except KeyboardInterrupt:
                # Ctrl-C inside a request leaves the connection half used: the next request
                # (in the app's except KeyboardInterrupt block) needs a fresh one.
                self._drop()
                raise
            except (ConnectionError, http.client.HTTPException, OSError) as e:
                self._drop()
                # A kept-alive connection the server closed fails on first use: again at once.
                if attempt == 1 and isinstance(e, (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)):
                    continue
                now = time.monotonic()
                if first_failure is None:
                    first_failure = now
                    if grace > 0:
                        logger.warning("robot daemon at %s is not answering (%s): trying again for up to %.0f s",
                                       self.base_url, e, grace)
                if now - first_failure + pause > grace:
                    waited = f"did not answer for {now - first_failure:.1f} s" if grace > 0 else "is not reachable"
                    raise DaemonUnavailableError(
                        f"robot daemon at {self.base_url} {waited} ({e}); is robot-daemon running?"
                        + (f" (ROBOT_SDK_RECONNECT_GRACE={grace:g} s is how long the SDK waits)" if grace > 0 else "")
                    ) from e
                time.sleep(pause)
                pause = min(pause * 2, 1.0)
        if first_failure is not None and grace > 0:
            logger.warning("robot daemon at %s answers again after %.1f s", self.base_url, time.monotonic() - first_failure)
        if resp.status >= 400:
            text = raw.decode("utf-8", "replace")
            detail = text
            try:
                detail = json.loads(text).get("detail", text)
            except (ValueError, AttributeError):
                pass
            raise RequestRefusedError(method, path, resp.status, str(detail))
        return raw

    def close(self) -> None:
        self._drop()


class FaceTarget:
    """A face head tracking found (the public SDK's FaceTarget): ``detected``; ``x``, ``y`` the
    face's centre in the image from -1 to 1 (x to the right, y down); ``roll`` in radians; ``ts``
    the Unix time of the frame. None where nothing was detected."""

    def __init__(self, detected: bool = False, x: Optional[float] = None, y: Optional[float] = None,
                 roll: Optional[float] = None, ts: Optional[float] = None) -> None:
        self.detected = bool(detected)
        self.x, self.y, self.roll, self.ts = x, y, roll, ts

    @classmethod
    def from_dict(cls, d: dict) -> "FaceTarget":
        return cls(bool(d.get("detected")), d.get("x"), d.get("y"), d.get("roll"), d.get("ts"))

    def model_dump(self) -> dict:
        return {"detected": self.detected, "x": self.x, "y": self.y, "roll": self.roll, "ts": self.ts}

    def __repr__(self) -> str:
        return f"FaceTarget(detected={self.detected}, x={self.x}, y={self.y}, roll={self.roll}, ts={self.ts})"


_CONNECTION_MODES = ("auto", "localhost_only", "network")
_MEDIA_BACKENDS = ("default", "auto", "no_media", "local", "webrtc", "gstreamer", "gstreamer_no_video", "sounddevice", "opencv")


class Robot:
    """A connection to the robot through the robot daemon: the anchor SDK's robot class.

    The daemon is found at ``url``, else at ``host``/``port`` when given, else at
    ``$ROBOT_DAEMON_URL`` (the daemon sets it for the apps it runs), else http://127.0.0.1:8000.
    ``token`` defaults to ``$ROBOT_DAEMON_TOKEN`` (an app the daemon runs has its own there), else the
    file ``$ROBOT_DAEMON_TOKEN_FILE`` names; for the daemon on this machine at port 8000, the owner's
    ``<data-dir>/api-token`` of its default data dir, else its socket ``<data-dir>/daemon.sock``.

    The anchor's keyword arguments are taken: ``connection_mode`` ("localhost_only" forces
    127.0.0.1; "auto" and "network" use the address above), ``localhost_only`` (its deprecated
    alias), ``timeout`` (of each request), ``automatic_body_yaw`` (set on the daemon when
    connecting, as the anchor does), ``log_level`` (of the "robot_sdk" logger), and
    ``media_backend`` ("no_media" turns ``robot.media`` off, "webrtc" takes the camera and
    microphones over WebRTC even on the robot; every other backend name means the daemon's media,
    from its socket on the robot and over WebRTC elsewhere). ``robot_name`` and ``use_sim`` mean nothing here (one daemon serves one robot,
    simulated or not by its own --sim) and are ignored; ``spawn_daemon=True`` only checks that a
    daemon answers, since this SDK does not start one.

    Opening a Robot opens a session on the daemon: inside an app the daemon started, the session
    belongs to that app; anywhere else it is a client of its own, listed in the daemon's status
    until ``close()`` (or until the process ends and the session lease expires). As with the
    anchor, many clients may drive the robot at once; the daemon's app slot is its one running app.
    """

    def __init__(
        self,
        robot_name: str = "robot",
        host: Optional[str] = None,
        port: Optional[int] = None,
        connection_mode: str = "auto",
        spawn_daemon: bool = False,
        use_sim: bool = False,
        timeout: float = 5.0,
        automatic_body_yaw: bool = True,
        log_level: Union[str, int] = "INFO",
        media_backend: str = "default",
        localhost_only: Optional[bool] = None,
        *,
        url: Optional[str] = None,
        token: Optional[str] = None,
        open_session: bool = True,
    ) -> None:
        logger.setLevel(log_level)
        mode = str(connection_mode).lower()
        if mode not in _CONNECTION_MODES:
            raise ValueError("connection_mode must be 'auto', 'localhost_only' or 'network'")
        if localhost_only is not None:
            warnings.warn("localhost_only is deprecated: use connection_mode", DeprecationWarning, stacklevel=2)
            if mode == "auto":
                mode = "localhost_only" if localhost_only else "network"
        backend = str(getattr(media_backend, "value", media_backend)).lower()
        if backend not in _MEDIA_BACKENDS:
            logger.warning("unknown media backend %r: using the daemon's media", media_backend)
        base = _daemon_url(url, host, port, mode, robot_name)
        self._http = _Transport(base, token, timeout)
        self.url = base
        self.robot_name = robot_name
        self.connection_mode = mode
        self.session_id: Optional[str] = None
        self.session_kind: Optional[str] = None
        self._heartbeat_stop = threading.Event()
        self._heartbeat: Optional[threading.Thread] = None
        self._move_cancelled = threading.Event()
        self._last_face_ts: Optional[float] = None
        self.is_recording = False
        # On the robot media come from the daemon's socket; a laptop gets them over WebRTC (or
        # HTTP without aiortc).
        transport = {"local": "local", "webrtc": "webrtc", "gstreamer": "http", "gstreamer_no_video": "http"}.get(backend, "auto")
        self._media = Media(self._http, enabled=backend != "no_media", transport=transport)
        self._media_released = False
        try:
            try:
                # No grace at connect: no daemon at all is said at once.
                self.daemon_status = self._http.request("GET", "/api/daemon/status", grace=0)
            except DaemonUnavailableError as e:
                if spawn_daemon:
                    raise DaemonUnavailableError(
                        f"spawn_daemon=True: this SDK does not start a daemon, and none answers at {base}: "
                        "start one with `robot-daemon --sim` (simulated) or `robot-daemon`") from e
                raise
            self.set_automatic_body_yaw(bool(automatic_body_yaw))
            if backend == "no_media":  # the daemon lets go of the devices; close() takes them back
                self.release_media()
            if open_session:
                self._open_session()
        except BaseException:
            self._http.close()
            raise

    # --- session -------------------------------------------------------------------------------

    def _open_session(self) -> None:
        from . import __version__

        s = self._http.request(
            "POST", "/api/sessions", {"pid": os.getpid(), "client": f"robot_sdk/{__version__}"}
        )
        self.session_id = s["id"]
        self.session_kind = s.get("kind")
        interval = max(0.5, float(s.get("ttl", 10)) / 3)
        self._heartbeat = threading.Thread(
            target=self._keep_alive, args=(interval,), name="robot-session", daemon=True
        )
        self._heartbeat.start()

    def _keep_alive(self, interval: float) -> None:
        while not self._heartbeat_stop.wait(interval):
            try:
                self._http.request("POST", f"/api/sessions/{self.session_id}/heartbeat", grace=0)
            except RequestRefusedError as e:
                if e.status != 404 or self._heartbeat_stop.is_set():
                    continue
                # The daemon did not hear from us for longer than the lease (it stalled, or was
                # unreachable): the session expired. Resume with a new one, and say so.
                try:
                    self._resume_session()
                except Exception as err:  # the next beat tries again
                    logger.warning("robot daemon session %s expired; a new one could not be opened yet: %s",
                                   self.session_id, err)
            except Exception:  # the next beat retries; the daemon expires the lease if we stay silent
                pass

    def _resume_session(self) -> None:
        from . import __version__

        old = self.session_id
        s = self._http.request(
            "POST", "/api/sessions", {"pid": os.getpid(), "client": f"robot_sdk/{__version__}"}, grace=0
        )
        if self._heartbeat_stop.is_set():  # closed meanwhile: end the new one too
            self._http.request("DELETE", f"/api/sessions/{s['id']}", grace=0)
            return
        self.session_id = s["id"]
        self.session_kind = s.get("kind")
        logger.warning("robot daemon session %s expired while the daemon did not answer; resumed as session %s",
                       old, self.session_id)

    def close(self) -> None:
        """End the session and close the connection. Safe to call twice."""
        self._heartbeat_stop.set()
        self._media.close()
        if self._media_released:
            try:
                self.acquire_media()
            except Exception:
                pass
        if self.session_id is not None:
            sid, self.session_id = self.session_id, None
            try:
                self._http.request("DELETE", f"/api/sessions/{sid}", grace=0)
            except Exception:
                pass
        self._http.close()

    def __enter__(self) -> "Robot":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # The module-level helper, also reachable from a Robot: robot.create_head_pose(yaw=30).
    create_head_pose = staticmethod(create_head_pose)

    # --- media ---------------------------------------------------------------------------------

    @property
    def media(self) -> Media:
        """The microphone, speaker and camera (see robot_sdk.media.Media)."""
        return self._media

    @property
    def media_released(self) -> bool:
        """Whether release_media() turned this Robot's media off."""
        return self._media_released

    def release_media(self) -> None:
        """Have the daemon close the camera and sound card, so that this program can open them
        itself (OpenCV, sounddevice), as the public SDK's does; ``robot.media`` calls then raise.
        close() (or leaving a ``with`` block) takes them back. Idempotent."""
        self._media.close()
        self._http.request("POST", "/api/media/release")
        self._media_released = True
        self._media._enabled = False

    def acquire_media(self) -> None:
        """Have the daemon open the camera and sound card again, and use them through this Robot.
        Idempotent."""
        self._http.request("POST", "/api/media/acquire")
        self._media_released = False
        self._media._enabled = True

    @property
    def imu(self) -> Optional[dict]:
        """The IMU's data: None, as on robots without one (the simulated robot has none)."""
        return None

    # --- state ---------------------------------------------------------------------------------

    def get_state(self) -> dict:
        """The full state: head_pose, antennas_position, body_yaw, targets, control_mode, awake."""
        return self._http.request("GET", "/api/state/full")

    def get_current_head_pose(self) -> Any:
        """The present head pose: a (4, 4) float64 numpy array."""
        return pose_from_wire(self._http.request("GET", "/api/state/present_head_pose", query={"use_pose_matrix": "true"}))

    def get_present_antenna_joint_positions(self) -> list:
        """The present antenna angles [right, left] in radians."""
        return list(self._http.request("GET", "/api/state/present_antenna_joint_positions"))

    def get_current_joint_positions(self) -> Tuple[List[float], List[float]]:
        """The present joint angles in radians: the head's 7 (body yaw, then the six Stewart
        motors) and the antennas' 2 [right, left]. On the simulated robot the head's come from the
        inverse kinematics of its pose, as its motors would have them."""
        state = self._http.request("GET", "/api/state/full", query={"with_head_joints": "true"})
        head = state.get("head_joints")
        if head is None:
            raise RobotError(
                f"the daemon's {state.get('backend', '?')} backend does not report head joint angles")
        return [float(v) for v in head], [float(v) for v in state["antennas_position"]]

    def is_awake(self) -> bool:
        """Whether the robot is awake."""
        return bool(self.get_state()["awake"])

    # --- motion --------------------------------------------------------------------------------

    def _target(self, head: Any, antennas: Any, body_yaw: Any, prefix: str) -> dict:
        body: dict = {}
        if head is not None:
            body[prefix + "head_pose"] = pose_body(head)
        if antennas is not None:
            body[prefix + "antennas"] = _antennas(antennas)
        if body_yaw is not None:
            body[prefix + "body_yaw"] = float(body_yaw)
        return body

    def set_target(self, head: Optional[PoseLike] = None, antennas: Any = None, body_yaw: Optional[float] = None) -> None:
        """Set targets immediately; omitted parts keep their target. ``head`` is a 4x4 pose
        (a numpy array, as create_head_pose makes); ``antennas`` two angles in radians [right, left]."""
        if head is None and antennas is None and body_yaw is None:
            raise ValueError("At least one of head, antennas or body_yaw must be provided.")
        if body_yaw is not None and not isinstance(body_yaw, (int, float)) and not hasattr(body_yaw, "__float__"):
            raise ValueError("body_yaw must be a float.")
        self._http.request("POST", "/api/move/set_target", self._target(head, antennas, body_yaw, "target_"))

    def set_target_head_pose(self, pose: PoseLike) -> None:
        """Set the head's target pose (a 4x4 matrix)."""
        if pose is None:
            raise ValueError("Pose must be provided as a 4x4 matrix.")
        self.set_target(head=pose)

    def set_target_antenna_joint_positions(self, antennas: Any) -> None:
        """Set the antennas' targets (two angles in radians)."""
        self.set_target(antennas=antennas)

    def set_target_body_yaw(self, body_yaw: float) -> None:
        """Set the body's target yaw in radians."""
        self.set_target(body_yaw=body_yaw)

    def goto_target(
        self,
        head: Optional[PoseLike] = None,
        antennas: Any = None,
        duration: float = 0.5,
        method: Union[str, Enum] = "minjerk",
        body_yaw: Optional[float] = 0.0,
        wait: bool = True,
    ) -> str:
        """Move smoothly to the targets over ``duration`` seconds; returns the move's uuid.

        The anchor's order and defaults: ``body_yaw`` is 0.0 unless given (None keeps it);
        ``method`` is linear, minjerk, ease_in_out or cartoon (or an InterpolationTechnique). The call
        returns when the move ends, unless ``wait=False``.
        """
        if head is None and antennas is None and body_yaw is None:
            raise ValueError("At least one of head, antennas or body_yaw must be provided.")
        if float(duration) <= 0:
            raise ValueError("Duration must be positive and non-zero. Use set_target() for immediate position setting.")
        body = self._target(head, antennas, body_yaw, "")
        body["duration"] = float(duration)
        body["interpolation"] = str(getattr(method, "value", method))
        move = self._http.request("POST", "/api/move/goto", body)
        if wait:
            self._wait_move(move)
        return move["uuid"]

    def look_at_world(self, x: float, y: float, z: float, duration: float = 1.0, perform_movement: bool = True) -> Any:
        """Point the head at (x, y, z) metres in the robot's frame (x forward, y left, z up) over
        ``duration`` seconds (0: at once); returns the pose, a (4, 4) array (only computed if not
        perform_movement)."""
        return self._look_at("/api/move/look_at_world", {"x": float(x), "y": float(y), "z": float(z)}, duration, perform_movement)

    def look_at_image(self, u: float, v: float, duration: float = 1.0, perform_movement: bool = True) -> Any:
        """Point the head at pixel (u, v) of the camera image (from its top left corner)."""
        return self._look_at("/api/move/look_at_image", {"u": float(u), "v": float(v)}, duration, perform_movement)

    def _look_at(self, path: str, body: dict, duration: float, perform_movement: bool) -> Any:
        if duration < 0:
            raise ValueError("Duration can't be negative.")
        body.update(duration=float(duration), perform_movement=bool(perform_movement))
        answer = self._http.request("POST", path, body)
        if answer.get("uuid"):
            self._wait_move({"uuid": answer["uuid"], "duration": duration})
        return pose_from_wire({"m": answer["m"]})

    def wake_up(self, wait: bool = True) -> str:
        """Wake the robot as the public SDK does: the motors on, 2 s to the init pose (antennas
        ±0.1745 rad), the wake-up sound with a 20° roll of the head and back (2.5 s in all)."""
        return self._play("wake_up", wait)

    def goto_sleep(self, wait: bool = True) -> str:
        """Lay the head down as the public SDK does: back to the init pose first when far from it,
        the go-to-sleep sound, 2 s to the sleep pose and 2 s of rest. The motors stay on, holding
        the sleep pose: moving afterwards moves the robot (``disable_motors()`` lets it go limp)."""
        return self._play("goto_sleep", wait, {"disable_motors": "false"})

    # --- what the daemon adds to the motion ----------------------------------------------------

    def enable_wobbling(self) -> None:
        """The head moves with the sound the robot speaks (play_sound, push_audio_sample), on top
        of the targets the app sets, as a person's does while talking."""
        self._http.request("POST", "/api/media/wobbling/enable")

    def disable_wobbling(self) -> None:
        """Stop the speech wobble; the head goes back to its targets."""
        self._http.request("POST", "/api/media/wobbling/disable")

    def start_head_tracking(self, weight: float = 1.0) -> None:
        """Turn the head toward the face the camera sees, in the daemon. ``weight`` in [0, 1]: 1
        lets tracking own the head's orientation, less blends it with the app's targets, 0 pauses
        detection without tearing the tracker down. Raises RequestRefusedError naming what is
        missing when the daemon has no face detector (its runtime or model)."""
        weight = float(weight)
        if not 0.0 <= weight <= 1.0:
            raise ValueError("weight must be within [0, 1]")
        self._http.request("POST", "/api/media/tracking/enable", {"weight": weight})

    def stop_head_tracking(self) -> None:
        """Stop head tracking; the head goes back to the app's targets."""
        self._http.request("POST", "/api/media/tracking/disable")

    def get_tracked_face(self, wait: bool = True, timeout: float = 5.0) -> "FaceTarget":
        """The latest face head tracking saw: ``detected``, and when detected ``x``, ``y`` (the
        face's centre in the image, -1..1 from its centre, x to the right, y down), ``roll`` and
        ``ts`` (Unix time of the frame). With ``wait`` (the default), waits up to ``timeout`` s for
        a detection newer than the previous call's, as the public SDK waits for the next status."""
        deadline = time.monotonic() + float(timeout)
        while True:
            face = FaceTarget.from_dict(self._http.request("GET", "/api/media/tracking/face"))
            if not wait or (face.ts is not None and face.ts != self._last_face_ts) or time.monotonic() >= deadline:
                self._last_face_ts = face.ts
                return face
            time.sleep(0.05)

    def _play(self, name: str, wait: bool, query: Optional[dict] = None) -> str:
        move = self._http.request("POST", f"/api/move/play/{name}", query=query)
        if wait:
            self._wait_move(move)
        return move["uuid"]

    def _wait_move(self, move: dict) -> None:
        """Sleep for the move's duration, then until the daemon reports it ended (at most 1 s more)."""
        time.sleep(float(move.get("duration", 0)))
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            running = self.get_state().get("move")
            if not running or running.get("uuid") != move["uuid"]:
                return
            time.sleep(0.01)

    def stop_move(self, uuid: Optional[str] = None) -> None:
        """Stop the running move (or the one with this uuid)."""
        self._http.request("POST", "/api/move/stop", {"uuid": uuid} if uuid else {})

    def play_move(self, move: Any, play_frequency: float = 100.0, initial_goto_duration: float = 0.0, sound: bool = True) -> None:
        """Play a move (an object with ``duration`` and ``evaluate(t)``, see robot_sdk.motion.Move)
        at ``play_frequency`` Hz until it ends or ``cancel_move()`` is called."""
        if play_frequency <= 0:
            raise ValueError("play_frequency must be positive")
        self._move_cancelled.clear()
        if initial_goto_duration > 0:
            head, antennas, body_yaw = move.evaluate(0.0)
            self.goto_target(head=head, antennas=antennas, duration=initial_goto_duration, body_yaw=body_yaw)
        path = getattr(move, "sound_path", None)
        if sound and path is not None:
            self._media.play_sound(str(path))
        period = 1.0 / play_frequency
        duration = float(move.duration)
        t0 = time.monotonic()
        while not self._move_cancelled.is_set():
            elapsed = time.monotonic() - t0
            if elapsed >= duration:
                break
            # As the public SDK: never past the last sample (a recorded move refuses its end).
            head, antennas, body_yaw = move.evaluate(min(elapsed, duration - 1e-2))
            if head is not None or antennas is not None or body_yaw is not None:
                self.set_target(head=head, antennas=antennas, body_yaw=body_yaw)
            spent = time.monotonic() - t0 - elapsed
            self._move_cancelled.wait(max(0.001, period - spent))

    async def async_play_move(self, move: Any, play_frequency: float = 100.0, initial_goto_duration: float = 0.0, sound: bool = True) -> None:
        """play_move for asyncio code: the move plays in a worker thread."""
        await asyncio.get_running_loop().run_in_executor(
            None, lambda: self.play_move(move, play_frequency, initial_goto_duration, sound))

    def cancel_move(self) -> None:
        """Stop a move that play_move plays, at its next step."""
        self._move_cancelled.set()

    # --- motion recording ---------------------------------------------------------------------

    def start_recording(self) -> None:
        """Start recording the commanded motion (one frame per 10 ms control period)."""
        self._http.request("POST", "/api/move/recording/start")
        self.is_recording = True

    def stop_recording(self) -> List[dict]:
        """Stop recording; returns the frames: {"time", "head" (4x4), "antennas", "body_yaw"}."""
        frames = self._http.request("POST", "/api/move/recording/stop")["frames"]
        self.is_recording = False
        return frames

    # --- motors --------------------------------------------------------------------------------

    def set_motor_mode(self, mode: str) -> None:
        """Set the motors to enabled, disabled or gravity_compensation."""
        self._http.request("POST", f"/api/motors/set_mode/{mode}")

    def enable_motors(self, ids: Optional[List[str]] = None) -> None:
        """Motors hold their targets: all, or those named (body_rotation, stewart_1 … stewart_6,
        right_antenna, left_antenna)."""
        self._http.request("POST", "/api/motors/torque", {"ids": list(ids) if ids else None, "on": True})

    def disable_motors(self, ids: Optional[List[str]] = None) -> None:
        """Motors go limp: all, or those named."""
        self._http.request("POST", "/api/motors/torque", {"ids": list(ids) if ids else None, "on": False})

    def enable_gravity_compensation(self) -> None:
        """The head holds against gravity only and can be moved by hand."""
        self.set_motor_mode("gravity_compensation")

    def disable_gravity_compensation(self) -> None:
        """The motors hold their targets again."""
        self.set_motor_mode("enabled")

    def set_automatic_body_yaw(self, enabled: bool) -> None:
        """With automatic body yaw (on by default), the body turns when the head must turn more
        than 65° from it."""
        self._http.request("POST", "/api/motors/automatic_body_yaw", {"enabled": bool(enabled)})

    # --- audio (also on robot.media) -----------------------------------------------------------

    def get_audio_sample(self, max_samples: Optional[int] = None) -> Any:
        """robot.media.get_audio_sample, kept on Robot for apps written before media."""
        return self._media.get_audio_sample(max_samples)

    def push_audio_sample(self, samples: Sequence[float]) -> int:
        """robot.media.push_audio_sample."""
        return self._media.push_audio_sample(samples)

    def play_sound(self, file: str) -> float:
        """robot.media.play_sound."""
        return self._media.play_sound(file)


def _daemon_url(url: Optional[str], host: Optional[str], port: Optional[int], mode: str, robot_name: str = "robot") -> str:
    if url:
        return url.rstrip("/")
    set_url = os.environ.get("ROBOT_DAEMON_URL")
    if not set_url and host is None and port is None and mode != "localhost_only":
        # As the public SDK: the robot by its mDNS name on the local network, then this machine.
        ip = _mdns_resolve(_mdns_label(robot_name) + ".local")
        if ip is not None:
            logger.info("found the robot daemon at %s (%s.local)", ip, _mdns_label(robot_name))
            return f"http://{ip}:8000"
    env = set_url or DEFAULT_DAEMON_URL
    if host is None and port is None and mode != "localhost_only":
        return env.rstrip("/")
    parsed = urllib.parse.urlsplit(env)
    if mode == "localhost_only":
        host = "127.0.0.1"
    h = host or parsed.hostname or "127.0.0.1"
    p = port if port is not None else (parsed.port or 8000)
    if ":" in h and not h.startswith("["):
        h = f"[{h}]"
    return f"http://{h}:{int(p)}"


def _mdns_label(name: str) -> str:
    """A robot's name as the daemon announces it: a DNS label (as robotd's mdnsLabel)."""
    out = []
    for ch in name.lower():
        if ("a" <= ch <= "z") or ("0" <= ch <= "9"):
            out.append(ch)
        elif out and out[-1] != "-":
            out.append("-")
    label = "".join(out).strip("-")[:63].strip("-")
    return label or "robot"


MDNS_TIMEOUT = 0.5  # seconds a multicast question waits for the robot's answer


def _mdns_resolve(host: str, timeout: float = MDNS_TIMEOUT) -> Optional[str]:
    """The IPv4 address that answers the mDNS question for ``host`` (name.local), or None.

    One question to 224.0.0.251:5353 asking for a unicast answer (RFC 6762 5.4): the standard
    library suffices, so that finding the robot needs no mDNS package on the laptop."""
    import socket
    import struct

    labels = host.rstrip(".").split(".")
    question = struct.pack(">6H", 0, 0, 1, 0, 0, 0)
    for label in labels:
        question += bytes([len(label)]) + label.encode("ascii", "ignore")
    question += b"\0" + struct.pack(">HH", 1, 0x8001)  # type A, class IN with the unicast bit
    want = [label.lower() for label in labels]
    try:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    except OSError:
        return None
    try:
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 255)
        sock.sendto(question, ("224.0.0.251", 5353))
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            sock.settimeout(left)
            data, _ = sock.recvfrom(9000)
            ip = _mdns_answer(data, want)
            if ip is not None:
                return ip
    except (OSError, ValueError, IndexError, struct.error):
        return None
    finally:
        sock.close()


def _mdns_name(data: bytes, off: int) -> Tuple[List[str], int]:
    """The name at off in a DNS message (compression pointers followed) and the offset after it."""
    labels: List[str] = []
    end = -1
    for _ in range(128):
        n = data[off]
        if n & 0xC0 == 0xC0:
            if end < 0:
                end = off + 2
            off = ((n & 0x3F) << 8) | data[off + 1]
            continue
        if n == 0:
            return labels, (end if end >= 0 else off + 1)
        labels.append(data[off + 1:off + 1 + n].decode("ascii", "replace").lower())
        off += 1 + n
    raise ValueError("a DNS name loops")


def _mdns_answer(data: bytes, want: List[str]) -> Optional[str]:
    import socket
    import struct

    _, flags, qd, an, ns, ar = struct.unpack(">6H", data[:12])
    if not flags & 0x8000:  # a question, not an answer
        return None
    off = 12
    for _ in range(qd):
        _, off = _mdns_name(data, off)
        off += 4
    for _ in range(an + ns + ar):
        name, off = _mdns_name(data, off)
        rtype, _, _, rdlen = struct.unpack(">HHIH", data[off:off + 10])
        off += 10
        if rtype == 1 and rdlen == 4 and name == want:
            return socket.inet_ntoa(data[off:off + 4])
        off += rdlen
    return None
