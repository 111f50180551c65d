"""Head poses: a translation in metres and roll/pitch/yaw in radians."""

import math
from dataclasses import asdict, dataclass


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
        """Build a pose from the daemon's JSON shape."""
        return cls(**{k: float(d.get(k, 0.0)) for k in ("x", "y", "z", "roll", "pitch", "yaw")})


def create_head_pose(
    x: float = 0.0,
    y: float = 0.0,
    z: float = 0.0,
    roll: float = 0.0,
    pitch: float = 0.0,
    yaw: float = 0.0,
    mm: bool = False,
    degrees: bool = False,
) -> HeadPose:
    """Create a head pose; with ``degrees=True`` angles are in degrees, with ``mm=True`` lengths in mm."""
    scale = 0.001 if mm else 1.0
    angle = math.radians if degrees else float
    return HeadPose(
        x=x * scale,
        y=y * scale,
        z=z * scale,
        roll=angle(roll),
        pitch=angle(pitch),
        yaw=angle(yaw),
    )
