"""Move: something ``Robot.play_move`` plays by evaluating it over time."""

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Optional, Tuple


class Move(ABC):
    """A move: ``duration`` seconds long, evaluated at times ``0 <= t <= duration``."""

    @property
    def sound_path(self) -> Optional[Path]:
        """A sound to play with the move, if any."""
        return None

    @property
    @abstractmethod
    def duration(self) -> float:
        """The move's length in seconds."""

    @abstractmethod
    def evaluate(self, t: float) -> Tuple[Any, Any, Optional[float]]:
        """The head pose (a 4x4 matrix, or None), antennas (two radians, or None) and
        body yaw (radians, or None) at time t."""
