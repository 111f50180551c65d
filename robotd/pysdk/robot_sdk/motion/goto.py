"""GotoMove: a move from a start to a target (head pose, antennas, body yaw) along one of the
interpolation laws, played with ``Robot.play_move`` (the daemon's own goto follows the same laws)."""

from typing import Any, Optional, Tuple

from ..utils.interpolation import InterpolationTechnique, linear_pose_interpolation, time_trajectory
from .move import Move

__all__ = ["GotoMove"]


class GotoMove(Move):
    """From the start to the target in ``duration`` seconds; a target left None stays at its start."""

    def __init__(
        self,
        start_head_pose: Any,
        target_head_pose: Optional[Any],
        start_antennas: Any,
        target_antennas: Optional[Any],
        start_body_yaw: float,
        target_body_yaw: Optional[float],
        duration: float,
        method: Any = InterpolationTechnique.MIN_JERK,
    ) -> None:
        import numpy as np

        if duration <= 0:
            raise ValueError("duration must be positive")
        self.start_head_pose = np.asarray(start_head_pose, dtype=np.float64)
        self.target_head_pose = self.start_head_pose if target_head_pose is None else np.asarray(target_head_pose, dtype=np.float64)
        # Antenna readings may be whole turns away from the commanded range: wrap the start into
        # (-pi, pi] so that the straight path never sweeps a full turn.
        self.start_antennas = np.mod(np.asarray(start_antennas, dtype=np.float64) + np.pi, 2 * np.pi) - np.pi
        self.target_antennas = self.start_antennas if target_antennas is None else np.asarray(target_antennas, dtype=np.float64)
        self.start_body_yaw = float(start_body_yaw)
        self.target_body_yaw = self.start_body_yaw if target_body_yaw is None else float(target_body_yaw)
        self._duration = float(duration)
        self.method = InterpolationTechnique(getattr(method, "value", method))

    @property
    def duration(self) -> float:
        return self._duration

    def evaluate(self, t: float) -> Tuple[Any, Any, float]:
        s = time_trajectory(min(max(t / self._duration, 0.0), 1.0), method=self.method)
        head = linear_pose_interpolation(self.start_head_pose, self.target_head_pose, s, yaw_as_scalar=True)
        antennas = self.start_antennas + (self.target_antennas - self.start_antennas) * s
        return head, antennas, self.start_body_yaw + (self.target_body_yaw - self.start_body_yaw) * s
