"""Recorded moves: moves recorded on a robot, kept in move libraries that are datasets on the hub.

A library is read through the robot daemon, which downloads the dataset from its hub once and keeps
it in its cache (the libraries the public robot preloads, dances and emotions, at start): an app
names the dataset, ``RecordedMoves("owner/library")``, and plays a move itself with
``Robot.play_move(moves.get("name"))``, or asks the daemon to play it
(``POST /api/move/play/recorded-move-dataset/{dataset}/{move}``).

The daemon is found as ``Robot`` finds it (``$ROBOT_DAEMON_URL``, else http://127.0.0.1:8000), or
given: ``RecordedMoves(name, robot=robot)``.
"""

import bisect
import urllib.parse
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from ..utils.interpolation import linear_pose_interpolation
from .move import Move

# The libraries the public robot's daemon downloads at start (by their dataset IDs on the hub).
DEFAULT_EMOTIONS_DATASET = "pollen-robotics/reachy-mini-emotions-library"
DEFAULT_DANCES_DATASET = "pollen-robotics/reachy-mini-dances-library"
DEFAULT_DATASETS = [DEFAULT_EMOTIONS_DATASET, DEFAULT_DANCES_DATASET]

__all__ = ["DEFAULT_DATASETS", "DEFAULT_DANCES_DATASET", "DEFAULT_EMOTIONS_DATASET", "RecordedMove", "RecordedMoves"]


class RecordedMove(Move):
    """A move as recorded: ``move`` is the file's content ({description, time, set_target_data}),
    ``sound_path`` its sound, if any."""

    def __init__(self, move: Dict[str, Any], sound_path: Optional[Path] = None) -> None:
        self.move = move
        self._sound_path = Path(sound_path) if sound_path is not None else None
        self.description: str = move.get("description", "")
        self.timestamps: List[float] = [float(t) for t in move["time"]]
        self.trajectory: List[Dict[str, Any]] = move["set_target_data"]
        if not self.timestamps or len(self.timestamps) != len(self.trajectory):
            raise ValueError(
                f"a recorded move needs one frame per timestamp: {len(self.timestamps)} timestamps, "
                f"{len(self.trajectory)} frames")
        # As the public SDK: the mean frame period, and the move lasts one period per frame.
        self.dt: float = (self.timestamps[-1] - self.timestamps[0]) / len(self.timestamps)

    @property
    def duration(self) -> float:
        return len(self.trajectory) * self.dt

    @property
    def sound_path(self) -> Optional[Path]:
        return self._sound_path

    def evaluate(self, t: float) -> Tuple[Any, Any, float]:
        """The head pose (4x4), antennas (radians, right then left) and body yaw at time ``t``,
        linear between the two frames around it; ``t`` past the last timestamp is an error."""
        import numpy as np

        if t >= self.timestamps[-1]:
            raise ValueError(f"t={t:.3f} s is past the recorded move's last frame ({self.timestamps[-1]:.3f} s)")
        i = bisect.bisect_right(self.timestamps, t)
        prev = max(i - 1, 0)
        nxt = i if i < len(self.timestamps) else prev
        t0, t1 = self.timestamps[prev], self.timestamps[nxt]
        alpha = 0.0 if t1 == t0 else (t - t0) / (t1 - t0)
        a, b = self.trajectory[prev], self.trajectory[nxt]
        antennas = np.asarray(a["antennas"], dtype=np.float64)
        antennas = antennas + (np.asarray(b["antennas"], dtype=np.float64) - antennas) * alpha
        yaw0, yaw1 = float(a.get("body_yaw", 0.0) or 0.0), float(b.get("body_yaw", 0.0) or 0.0)
        head = linear_pose_interpolation(a["head"], b["head"], alpha)
        return head, antennas, yaw0 + (yaw1 - yaw0) * alpha


class RecordedMoves:
    """The move library of a dataset on the hub, read through the robot daemon."""

    def __init__(self, hf_dataset_name: str, robot: Any = None, *, url: Optional[str] = None, token: Optional[str] = None,
                 timeout: float = 60.0) -> None:
        self.hf_dataset_name = hf_dataset_name
        if robot is not None:
            self._http = robot._http
            self._own = False
        else:
            from ..robot import _daemon_url, _Transport

            # The first read of a library waits for the daemon to download it: a long timeout.
            self._http = _Transport(_daemon_url(url, None, None, "auto"), token, timeout)
            self._own = True
        self._quoted = urllib.parse.quote(hf_dataset_name, safe="/")
        self.moves: Dict[str, Optional[Dict[str, Any]]] = {
            name: None for name in self._http.request("GET", f"/api/move/recorded-move-datasets/list/{self._quoted}")}
        self.sounds: Dict[str, Optional[Path]] = {}

    def list_moves(self) -> List[str]:
        """The names of the library's moves."""
        return list(self.moves)

    def get(self, move_name: str) -> RecordedMove:
        """The move of that name (ValueError when the library has none)."""
        if move_name not in self.moves:
            raise ValueError(f"Move {move_name} not found in recorded moves library {self.hf_dataset_name}")
        if self.moves[move_name] is None:
            got = self._http.request(
                "GET", f"/api/move/recorded-move-datasets/move/{self._quoted}/{urllib.parse.quote(move_name, safe='')}")
            self.moves[move_name] = got["move"]
            self.sounds[move_name] = Path(got["sound_path"]) if got.get("sound_path") else None
        return RecordedMove(self.moves[move_name], self.sounds.get(move_name))  # type: ignore[arg-type]

    def close(self) -> None:
        if self._own:
            self._http.close()
