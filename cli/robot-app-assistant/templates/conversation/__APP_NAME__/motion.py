"""Movement fusion: one thread sends the robot its targets 50 times a second, blending a speech
wobble (head and antennas moving with the loudness of what the robot says) over a base pose
(where the tools put the head and antennas, with a slow breathing when nothing else happens)."""

import math
import threading
import time
from dataclasses import dataclass, replace
from typing import List, Optional

from robot_sdk import Robot, create_head_pose

RATE = 50  # targets per second

# How far the wobble moves at full loudness (radians).
WOBBLE_PITCH = 0.10
WOBBLE_ROLL = 0.05
WOBBLE_YAW = 0.04
WOBBLE_ANTENNA = 0.25

# Joint ranges the base pose is kept in (radians).
LIMITS = {"yaw": math.radians(60), "pitch": math.radians(30), "roll": math.radians(25), "antenna": math.radians(80)}


@dataclass(frozen=True)
class Pose:
    """A base pose: head angles and antennas, in radians."""

    yaw: float = 0.0
    pitch: float = 0.0
    roll: float = 0.0
    left: float = 0.0
    right: float = 0.0

    def clamped(self) -> "Pose":
        def clamp(v: float, lim: float) -> float:
            return max(-lim, min(lim, v))

        return Pose(clamp(self.yaw, LIMITS["yaw"]), clamp(self.pitch, LIMITS["pitch"]), clamp(self.roll, LIMITS["roll"]),
                    clamp(self.left, LIMITS["antenna"]), clamp(self.right, LIMITS["antenna"]))


def minjerk(s: float) -> float:
    """Minimum-jerk progress for s in [0, 1]."""
    s = max(0.0, min(1.0, s))
    return s * s * s * (10 - 15 * s + 6 * s * s)


def blend(a: Pose, b: Pose, k: float) -> Pose:
    return Pose(*(x + (y - x) * k for x, y in zip((a.yaw, a.pitch, a.roll, a.left, a.right),
                                                    (b.yaw, b.pitch, b.roll, b.left, b.right))))


class MovementManager:
    """Owns the robot's motion while the app runs: tools call ``goto``, speech calls ``speak``."""

    def __init__(self, robot: Robot, breathing: bool = True) -> None:
        self.robot = robot
        self.breathing = breathing
        self._lock = threading.Lock()
        self._from = Pose()
        self._to = Pose()
        self._move_start = 0.0
        self._move_duration = 0.0
        self._envelope: List[float] = []
        self._speech_start = 0.0
        self._last_activity = time.monotonic()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self.errors = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="motion", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def goto(self, duration: float = 0.8, **parts: float) -> Pose:
        """Move the base pose smoothly to new values (yaw, pitch, roll, left, right in radians)."""
        now = time.monotonic()
        with self._lock:
            current = self._base(now)
            target = replace(self._to, **parts).clamped()
            self._from, self._to = current, target
            self._move_start, self._move_duration = now, max(0.05, float(duration))
            self._last_activity = now
            return target

    def speak(self, envelope: List[float]) -> None:
        """Wobble with the loudness of a sound that starts playing now (one value per 20 ms)."""
        now = time.monotonic()
        with self._lock:
            self._envelope = list(envelope)
            self._speech_start = now
            self._last_activity = now

    def speaking(self) -> bool:
        with self._lock:
            return time.monotonic() - self._speech_start < len(self._envelope) / RATE

    def _base(self, now: float) -> Pose:
        if self._move_duration <= 0:
            return self._to
        return blend(self._from, self._to, minjerk((now - self._move_start) / self._move_duration))

    def pose_at(self, now: float) -> Pose:
        """The fused pose: base pose, plus breathing when idle, plus the speech wobble."""
        with self._lock:
            base = self._base(now)
            t = now - self._speech_start
            i = int(t * RATE)
            level = self._envelope[i] if 0 <= i < len(self._envelope) else 0.0
            idle = now - self._last_activity
        yaw, pitch, roll, left, right = base.yaw, base.pitch, base.roll, base.left, base.right
        if self.breathing and idle > 2.0:
            fade = min(1.0, (idle - 2.0) / 2.0)
            pitch += fade * 0.03 * math.sin(2 * math.pi * 0.25 * now)
            left += fade * 0.08 * math.sin(2 * math.pi * 0.25 * now)
            right -= fade * 0.08 * math.sin(2 * math.pi * 0.25 * now)
        if level > 0:
            pitch += WOBBLE_PITCH * level * math.sin(2 * math.pi * 3.1 * t)
            roll += WOBBLE_ROLL * level * math.sin(2 * math.pi * 2.3 * t + 0.7)
            yaw += WOBBLE_YAW * level * math.sin(2 * math.pi * 1.4 * t + 1.9)
            left += WOBBLE_ANTENNA * level * math.sin(2 * math.pi * 2.7 * t)
            right -= WOBBLE_ANTENNA * level * math.sin(2 * math.pi * 2.7 * t + 0.4)
        return Pose(yaw, pitch, roll, left, right)

    def _loop(self) -> None:
        period = 1.0 / RATE
        next_tick = time.monotonic()
        while not self._stop.is_set():
            p = self.pose_at(time.monotonic())
            try:
                self.robot.set_target(head=create_head_pose(yaw=p.yaw, pitch=p.pitch, roll=p.roll, degrees=False),
                                      antennas=[p.right, p.left])  # the SDK orders antennas [right, left]
            except Exception:  # the daemon refused or is restarting: keep the loop alive
                self.errors += 1
            next_tick += period
            delay = next_tick - time.monotonic()
            if delay < -period:  # fell behind: do not try to catch up
                next_tick = time.monotonic()
                delay = 0
            self._stop.wait(max(0.0, delay))
