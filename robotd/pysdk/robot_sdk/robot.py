"""The Robot client: the robot daemon's HTTP API as Python calls."""

import http.client
import json
import math
import os
import threading
import time
import urllib.parse
from typing import Any, Optional, Sequence, Union

from .errors import DaemonUnavailableError, RequestRefusedError
from .pose import HeadPose, create_head_pose

DEFAULT_DAEMON_URL = "http://127.0.0.1:8000"

# Audio is mono at this rate, both ways.
SAMPLE_RATE = 16000

# The daemon takes at most 10 seconds of audio per push.
MAX_PUSH_SAMPLES = 10 * SAMPLE_RATE

PoseLike = Union[HeadPose, dict]


def _pose_dict(head: PoseLike) -> dict:
    if isinstance(head, HeadPose):
        return head.to_dict()
    if isinstance(head, dict):
        return HeadPose.from_dict(head).to_dict()
    raise TypeError("head must be a HeadPose (see create_head_pose) or a dict with x, y, z, roll, pitch, yaw")


def _antennas(antennas: Sequence[float]) -> list:
    values = [float(a) for a in antennas]
    if len(values) != 2:
        raise ValueError("antennas must be two angles in radians: [left, right]")
    return values


class _Transport:
    """JSON over HTTP/1.1 with one persistent connection per thread."""

    def __init__(self, base_url: str, token: Optional[str], timeout: float) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"daemon URL must be http(s)://host[:port], got {base_url!r}")
        self.base_url = base_url
        self._scheme = parsed.scheme
        self._host = parsed.hostname
        self._port = parsed.port
        self._prefix = parsed.path.rstrip("/")
        self._token = token
        self._timeout = timeout
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            conn = cls(self._host, self._port, timeout=self._timeout)
            self._local.conn = conn
        return conn

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def request(self, method: str, path: str, body: Any = None, query: Optional[dict] = None) -> Any:
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
        # One retry: a kept-alive connection the server closed fails on first use.
        for attempt in (1, 2):
            conn = self._connection()
            try:
                conn.request(method, url, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
                break
            except (ConnectionError, http.client.HTTPException, OSError) as e:
                self._drop()
                if attempt == 2 or not isinstance(e, (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError)):
                    raise DaemonUnavailableError(
                        f"robot daemon at {self.base_url} is not reachable ({e}); is robot-daemon running?"
                    ) from e
        text = raw.decode("utf-8", "replace")
        if resp.status >= 400:
            detail = text
            try:
                detail = json.loads(text).get("detail", text)
            except (ValueError, AttributeError):
                pass
            raise RequestRefusedError(method, path, resp.status, str(detail))
        if not text:
            return None
        return json.loads(text)

    def close(self) -> None:
        self._drop()


class Robot:
    """A connection to the robot through the robot daemon.

    ``url`` defaults to ``$ROBOT_DAEMON_URL`` or http://127.0.0.1:8000; ``token`` to
    ``$ROBOT_DAEMON_TOKEN``. Opening a Robot opens a session on the daemon: inside an app the daemon
    started, the session belongs to that app; anywhere else it holds the robot's single app slot
    until ``close()`` (or until the process ends and the session lease expires).
    """

    def __init__(
        self,
        url: Optional[str] = None,
        token: Optional[str] = None,
        timeout: float = 5.0,
        open_session: bool = True,
    ) -> None:
        base = (url or os.environ.get("ROBOT_DAEMON_URL") or DEFAULT_DAEMON_URL).rstrip("/")
        if token is None:
            token = os.environ.get("ROBOT_DAEMON_TOKEN") or None
        self._http = _Transport(base, token, timeout)
        self.url = base
        self.session_id: Optional[str] = None
        self.session_kind: Optional[str] = None
        self._heartbeat_stop = threading.Event()
        self._heartbeat: Optional[threading.Thread] = None
        try:
            self.daemon_status = self._http.request("GET", "/api/daemon/status")
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
                self._http.request("POST", f"/api/sessions/{self.session_id}/heartbeat")
            except Exception:  # the next beat retries; the daemon expires the lease if we stay silent
                pass

    def close(self) -> None:
        """End the session and close the connection. Safe to call twice."""
        self._heartbeat_stop.set()
        if self.session_id is not None:
            sid, self.session_id = self.session_id, None
            try:
                self._http.request("DELETE", f"/api/sessions/{sid}")
            except Exception:
                pass
        self._http.close()

    def __enter__(self) -> "Robot":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # The module-level helper, also reachable from a Robot: robot.create_head_pose(yaw=30, degrees=True).
    create_head_pose = staticmethod(create_head_pose)

    # --- state ---------------------------------------------------------------------------------

    def get_state(self) -> dict:
        """The full state: head_pose, antennas_position, body_yaw, targets, control_mode, awake."""
        return self._http.request("GET", "/api/state/full")

    def get_current_head_pose(self) -> HeadPose:
        """The present head pose."""
        return HeadPose.from_dict(self.get_state()["head_pose"])

    def get_present_antenna_joint_positions(self) -> list:
        """The present antenna angles [left, right] in radians."""
        return list(self.get_state()["antennas_position"])

    def is_awake(self) -> bool:
        """Whether the robot is awake."""
        return bool(self.get_state()["awake"])

    # --- motion --------------------------------------------------------------------------------

    def _target(self, head, antennas, body_yaw, prefix: str) -> dict:
        body: dict = {}
        if head is not None:
            body[prefix + "head_pose"] = _pose_dict(head)
        if antennas is not None:
            body[prefix + "antennas"] = _antennas(antennas)
        if body_yaw is not None:
            body[prefix + "body_yaw"] = float(body_yaw)
        return body

    def set_target(
        self,
        head: Optional[PoseLike] = None,
        antennas: Optional[Sequence[float]] = None,
        body_yaw: Optional[float] = None,
    ) -> None:
        """Set targets immediately; omitted parts keep their target."""
        self._http.request("POST", "/api/move/set_target", self._target(head, antennas, body_yaw, "target_"))

    def goto_target(
        self,
        head: Optional[PoseLike] = None,
        antennas: Optional[Sequence[float]] = None,
        body_yaw: Optional[float] = None,
        duration: float = 0.5,
        method: str = "minjerk",
        wait: bool = True,
    ) -> str:
        """Move smoothly to the targets over ``duration`` seconds; returns the move's uuid.

        ``method`` is linear, minjerk, ease or cartoon. With ``wait`` the call returns when the move ends.
        """
        body = self._target(head, antennas, body_yaw, "")
        body["duration"] = float(duration)
        body["interpolation"] = method
        move = self._http.request("POST", "/api/move/goto", body)
        if wait:
            self._wait_move(move)
        return move["uuid"]

    def wake_up(self, wait: bool = True) -> str:
        """Enable the motors and move to the default pose."""
        return self._play("wake_up", wait)

    def goto_sleep(self, wait: bool = True) -> str:
        """Move to the sleep pose, then disable the motors."""
        return self._play("goto_sleep", wait)

    def _play(self, name: str, wait: bool) -> str:
        move = self._http.request("POST", f"/api/move/play/{name}")
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

    def set_motor_mode(self, mode: str) -> None:
        """Set the motors to enabled, disabled or gravity_compensation."""
        self._http.request("POST", f"/api/motors/set_mode/{mode}")

    def enable_motors(self) -> None:
        """Motors hold their targets."""
        self.set_motor_mode("enabled")

    def disable_motors(self) -> None:
        """Motors go limp."""
        self.set_motor_mode("disabled")

    # --- audio ---------------------------------------------------------------------------------

    def start_recording(self) -> int:
        """Start keeping what the microphone hears (earlier sound is dropped); returns the sample rate."""
        return int(self._http.request("POST", "/api/audio/start_recording")["sample_rate"])

    def stop_recording(self) -> None:
        """Stop recording and drop what was not read."""
        self._http.request("POST", "/api/audio/stop_recording")

    def get_audio_sample(self, max_samples: Optional[int] = None) -> list:
        """The samples recorded since the last call: mono floats in [-1, 1] at SAMPLE_RATE Hz.

        Returns an empty list when nothing new was heard. Raises RequestRefusedError when recording
        is not started (call ``start_recording`` first).
        """
        query = None
        if max_samples is not None:
            if int(max_samples) < 0:
                raise ValueError("max_samples must be a non-negative number of samples")
            query = {"max": int(max_samples)}
        return list(self._http.request("GET", "/api/audio/sample", query=query)["samples"])

    def push_audio_sample(self, samples: Sequence[float]) -> int:
        """Queue mono samples in [-1, 1] at SAMPLE_RATE Hz on the speaker; returns how many were queued.

        Long sounds are sent in pieces of at most 10 seconds, as the daemon takes them.
        """
        values = [float(s) for s in samples]
        for i, v in enumerate(values):
            if not math.isfinite(v):
                raise ValueError(f"samples[{i}] must be a finite number")
        for start in range(0, len(values), MAX_PUSH_SAMPLES):
            self._http.request("POST", "/api/audio/push_sample", {"samples": values[start:start + MAX_PUSH_SAMPLES]})
        return len(values)

    def play_sound(self, file: str) -> float:
        """Play a WAV file found at ``file`` on the robot; returns its duration in seconds."""
        return float(self._http.request("POST", "/api/audio/play_sound", {"file": os.fspath(file)})["duration"])
