"""Head poses: a translation in metres and roll/pitch/yaw in radians, or the anchor's 4x4 matrix.

Both describe the rotation R = Rz(yaw) @ Ry(pitch) @ Rx(roll) (scipy's ``from_euler("xyz", ...)``).
A :class:`HeadPose` converts to the 4x4 homogeneous matrix with ``numpy.asarray(pose)`` or
``pose.tolist()``; every call that takes a pose also takes such a matrix, as nested lists or as a
numpy array, without this package importing numpy.
"""

import math
from dataclasses import asdict, dataclass
from typing import Any, List


@dataclass(frozen=True)
class HeadPose:
    """A head pose relative to the rest position (metres and radians)."""

    x: float = 0.0
    y: float = 0.0
    z: float = 0.0
    roll: float = 0.0
    pitch: float = 0.0
    yaw: float = 0.0

    def to_dict(self) -> dict:
        """The JSON shape the daemon uses."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "HeadPose":
        """Build a pose from the daemon's JSON shape ({x..yaw} or {"m": [16]})."""
        if "m" in d:
            return cls.from_matrix(d["m"])
        return cls(**{k: float(d.get(k, 0.0)) for k in ("x", "y", "z", "roll", "pitch", "yaw")})

    # --- the anchor's 4x4 matrix --------------------------------------------------------------

    def tolist(self) -> List[List[float]]:
        """The 4x4 homogeneous matrix, as nested lists (row by row)."""
        cr, sr = math.cos(self.roll), math.sin(self.roll)
        cp, sp = math.cos(self.pitch), math.sin(self.pitch)
        cy, sy = math.cos(self.yaw), math.sin(self.yaw)
        return [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr, self.x],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr, self.y],
            [-sp, cp * sr, cp * cr, self.z],
            [0.0, 0.0, 0.0, 1.0],
        ]

    @property
    def matrix(self) -> List[List[float]]:
        """The 4x4 homogeneous matrix (same as ``tolist()``)."""
        return self.tolist()

    shape = (4, 4)

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        # Called by numpy itself (numpy.asarray(pose)): numpy is imported by then.
        import numpy

        return numpy.array(self.tolist(), dtype=dtype if dtype is not None else numpy.float64)

    def __getitem__(self, index: Any) -> Any:
        rows = self.tolist()
        if isinstance(index, tuple) and len(index) == 2:
            return rows[index[0]][index[1]]
        return rows[index]

    def flatten(self) -> List[float]:
        """The matrix's 16 numbers, row by row."""
        return [v for row in self.tolist() for v in row]

    @classmethod
    def from_matrix(cls, m: Any) -> "HeadPose":
        """A pose from a 4x4 homogeneous matrix: nested lists, 16 numbers row by row, or an array."""
        values = _flat16(m)
        r = [values[0:3], values[4:7], values[8:11]]
        pitch = math.asin(max(-1.0, min(1.0, -r[2][0])))
        if abs(r[2][0]) < 1 - 1e-9:
            roll = math.atan2(r[2][1], r[2][2])
            yaw = math.atan2(r[1][0], r[0][0])
        else:
            roll, yaw = 0.0, math.atan2(-r[0][1], r[1][1])
        return cls(x=values[3], y=values[7], z=values[11], roll=roll, pitch=pitch, yaw=yaw)


def _flat16(m: Any) -> List[float]:
    if hasattr(m, "tolist") and not isinstance(m, HeadPose):
        m = m.tolist()
    if isinstance(m, HeadPose):
        return m.flatten()
    try:
        rows = list(m)
    except TypeError:
        raise TypeError("a pose matrix is 4x4: nested lists or an array") from None
    if len(rows) == 16 and not any(isinstance(v, (list, tuple)) for v in rows):
        values = rows
    elif len(rows) == 4 and all(len(list(row)) == 4 for row in rows):
        values = [v for row in rows for v in row]
    else:
        raise ValueError(f"a head pose matrix must be 4x4, got {_shape(rows)}")
    out = [float(v) for v in values]
    if any(not math.isfinite(v) for v in out):
        raise ValueError("a head pose matrix must hold finite numbers")
    return out


def _shape(rows: list) -> str:
    try:
        return f"{len(rows)}x{len(rows[0])}"
    except TypeError:
        return f"{len(rows)} numbers"


def pose_body(head: Any) -> dict:
    """The JSON the daemon takes for a head pose: a HeadPose, a dict, or a 4x4 matrix (lists or array)."""
    if isinstance(head, HeadPose):
        return head.to_dict()
    if isinstance(head, dict):
        if "m" in head:
            return {"m": _flat16(head["m"])}
        unknown = set(head) - {"x", "y", "z", "roll", "pitch", "yaw"}
        if unknown:
            raise ValueError(f"unknown head pose keys {sorted(unknown)}: use x, y, z, roll, pitch, yaw (metres, radians)")
        return HeadPose.from_dict(head).to_dict()
    if hasattr(head, "tolist") or isinstance(head, (list, tuple)):
        return {"m": _flat16(head)}
    raise TypeError("head must be a HeadPose (see create_head_pose), a 4x4 matrix or a dict with x, y, z, roll, pitch, yaw")


def create_head_pose(
    x: float = 0.0,
    y: float = 0.0,
    z: float = 0.0,
    roll: float = 0.0,
    pitch: float = 0.0,
    yaw: float = 0.0,
    mm: bool = False,
    degrees: bool = True,
) -> HeadPose:
    """Create a head pose. Angles are in degrees unless ``degrees=False``, as in the anchor's SDK;
    lengths are in metres, or millimetres with ``mm=True``."""
    scale = 0.001 if mm else 1.0
    angle = math.radians if degrees else float
    return HeadPose(
        x=float(x) * scale,
        y=float(y) * scale,
        z=float(z) * scale,
        roll=angle(float(roll)),
        pitch=angle(float(pitch)),
        yaw=angle(float(yaw)),
    )
