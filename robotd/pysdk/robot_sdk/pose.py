"""Head poses as the public SDK has them: 4x4 homogeneous matrices, ``numpy.ndarray`` of shape (4, 4)
and dtype float64, translation in metres.

The rotation of ``create_head_pose(roll=..., pitch=..., yaw=...)`` is scipy's
``Rotation.from_euler("xyz", [roll, pitch, yaw])``, R = Rz(yaw) @ Ry(pitch) @ Rx(roll). It is built
here with numpy alone: importing scipy costs an app about 0.3 s at start, and the numbers are the
same (the tests compare them with scipy's).

numpy is imported when a pose is first made or read, not when ``robot_sdk`` is imported, so that an
app that moves only its antennas starts without it.
"""

import math
from typing import Any


def _np() -> Any:
    import numpy

    return numpy


def rotation_from_euler(roll: float, pitch: float, yaw: float) -> Any:
    """The 3x3 rotation of extrinsic x, y, z angles in radians (scipy's ``from_euler("xyz", ...)``)."""
    np = _np()
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ],
        dtype=np.float64,
    )


def euler_from_rotation(r: Any) -> tuple:
    """Roll, pitch, yaw in radians of a 3x3 rotation (scipy's ``as_euler("xyz")``)."""
    pitch = math.asin(max(-1.0, min(1.0, -float(r[2][0]))))
    if abs(float(r[2][0])) < 1 - 1e-9:
        roll = math.atan2(float(r[2][1]), float(r[2][2]))
        yaw = math.atan2(float(r[1][0]), float(r[0][0]))
    else:  # gimbal lock: scipy puts the whole angle on the first axis it keeps
        roll, yaw = 0.0, math.atan2(-float(r[0][1]), float(r[1][1]))
    return roll, pitch, yaw


def create_head_pose(
    x: float = 0,
    y: float = 0,
    z: float = 0,
    roll: float = 0,
    pitch: float = 0,
    yaw: float = 0,
    mm: bool = False,
    degrees: bool = True,
) -> Any:
    """A 4x4 homogeneous pose (``numpy.ndarray``, float64). Angles are in degrees unless
    ``degrees=False``; lengths in metres, or millimetres with ``mm=True``. As the public SDK's."""
    np = _np()
    if degrees:
        roll, pitch, yaw = math.radians(roll), math.radians(pitch), math.radians(yaw)
    pose = np.eye(4)
    pose[:3, :3] = rotation_from_euler(float(roll), float(pitch), float(yaw))
    pose[:, 3] = [x, y, z, 1]
    if mm:
        pose[:3, 3] /= 1000
    return pose


def as_pose_matrix(head: Any, what: str = "head") -> Any:
    """``head`` as a (4, 4) float64 array: an array, nested lists, or 16 numbers row by row.
    Raises ValueError naming the shape otherwise, and for numbers that are not finite."""
    np = _np()
    try:
        m = np.asarray(head, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{what} pose must be a 4x4 matrix of numbers") from None
    if m.shape == (16,):
        m = m.reshape(4, 4)
    if m.shape != (4, 4):
        raise ValueError(f"Head pose must be a 4x4 matrix, got shape {m.shape}.")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"{what} pose must hold finite numbers")
    return m


def pose_body(head: Any) -> dict:
    """The JSON the daemon takes for a head pose: ``{"m": [16 numbers, row by row]}``."""
    if isinstance(head, dict):
        if "m" in head:
            return {"m": as_pose_matrix(head["m"]).reshape(16).tolist()}
        unknown = set(head) - {"x", "y", "z", "roll", "pitch", "yaw"}
        if unknown:
            raise ValueError(f"unknown head pose keys {sorted(unknown)}: use x, y, z, roll, pitch, yaw (metres, radians)")
        return {k: float(head.get(k, 0.0)) for k in ("x", "y", "z", "roll", "pitch", "yaw")}
    return {"m": as_pose_matrix(head).reshape(16).tolist()}


def pose_from_wire(d: Any) -> Any:
    """A pose the daemon sent (``{"m": [16]}`` or ``{x, y, z, roll, pitch, yaw}``) as a (4, 4) array."""
    if isinstance(d, dict) and "m" in d:
        return as_pose_matrix(d["m"])
    if isinstance(d, dict):
        return create_head_pose(
            x=d.get("x", 0.0), y=d.get("y", 0.0), z=d.get("z", 0.0),
            roll=d.get("roll", 0.0), pitch=d.get("pitch", 0.0), yaw=d.get("yaw", 0.0), degrees=False,
        )
    return as_pose_matrix(d)
