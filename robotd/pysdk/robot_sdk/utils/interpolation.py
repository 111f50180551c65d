"""Interpolation of moves: the names ``goto_target(method=...)`` takes and the helpers the public
SDK's ``utils.interpolation`` has (minimum jerk, pose interpolation, time laws, pose distances).

numpy is imported on first use and scipy only by the functions that need rotations, so that
importing ``InterpolationTechnique`` costs an app nothing at start.
"""

from enum import Enum
from typing import Any, Callable, Optional, Tuple


class InterpolationTechnique(str, Enum):
    """How a move progresses from its start to its target."""

    LINEAR = "linear"
    MIN_JERK = "minjerk"
    EASE_IN_OUT = "ease_in_out"
    CARTOON = "cartoon"


def _np() -> Any:
    import numpy

    return numpy


def _rotation() -> Any:
    from scipy.spatial.transform import Rotation

    return Rotation


def time_trajectory(t: float, method: Any = InterpolationTechnique.MIN_JERK) -> float:
    """The fraction of the way covered at fraction ``t`` (0..1) of the time, for each technique.

    The daemon moves with the same laws (core/robot's Interpolation), so a goto played here and one
    asked of the daemon follow the same path.
    """
    if t < 0 or t > 1:
        raise ValueError("time value is out of range [0,1]")
    method = InterpolationTechnique(getattr(method, "value", method))
    if method is InterpolationTechnique.LINEAR:
        return t
    if method is InterpolationTechnique.MIN_JERK:
        return t * t * t * (10 - 15 * t + 6 * t * t)
    if method is InterpolationTechnique.EASE_IN_OUT:
        return 2 * t * t if t < 0.5 else 1 - ((2 - 2 * t) ** 2) / 2
    # cartoon: ease in and out "back", overshooting a little at both ends
    s = 1.70158 * 1.525
    if t < 0.5:
        return ((2 * t) ** 2 * ((s + 1) * 2 * t - s)) / 2
    u = 2 * t - 2
    return (u * u * ((s + 1) * u + s) + 2) / 2


def minimum_jerk(
    starting_position: Any,
    goal_position: Any,
    duration: float,
    starting_velocity: Optional[Any] = None,
    starting_acceleration: Optional[Any] = None,
    final_velocity: Optional[Any] = None,
    final_acceleration: Optional[Any] = None,
) -> Callable[[float], Any]:
    """The quintic from start to goal in ``duration`` seconds with the given boundary velocities and
    accelerations (zero by default): a function of the time that gives the position."""
    np = _np()
    x0 = np.asarray(starting_position, dtype=np.float64)
    x1 = np.asarray(goal_position, dtype=np.float64)
    zero = np.zeros(x0.shape)
    v0 = zero if starting_velocity is None else np.asarray(starting_velocity, dtype=np.float64)
    a0 = zero if starting_acceleration is None else np.asarray(starting_acceleration, dtype=np.float64)
    v1 = zero if final_velocity is None else np.asarray(final_velocity, dtype=np.float64)
    a1 = zero if final_acceleration is None else np.asarray(final_acceleration, dtype=np.float64)
    T = float(duration)
    # x(t) = c0 + c1 t + c2 t^2 + c3 t^3 + c4 t^4 + c5 t^5; the last three from the end conditions.
    c0, c1, c2 = x0, v0, a0 / 2
    system = np.array([[T**3, T**4, T**5], [3 * T**2, 4 * T**3, 5 * T**4], [6 * T, 12 * T**2, 20 * T**3]])
    rhs = np.array([x1 - c0 - c1 * T - c2 * T**2, v1 - c1 - 2 * c2 * T, a1 - 2 * c2])
    c3, c4, c5 = np.linalg.solve(system, rhs)
    coeffs = (c0, c1, c2, c3, c4, c5)

    def position(t: float) -> Any:
        if t > T:
            return x1
        return sum(c * t**i for i, c in enumerate(coeffs))

    return position


def linear_pose_interpolation(start_pose: Any, target_pose: Any, t: float, yaw_as_scalar: bool = False) -> Any:
    """The pose a fraction ``t`` of the way from one 4x4 pose to another: the translation on the
    straight line, the rotation along the shortest arc (``t`` outside 0..1 extrapolates).

    ``yaw_as_scalar`` turns the yaw as a signed angle (through the front, never the back) and
    interpolates only the rest of the rotation along the arc.
    """
    np = _np()
    R = _rotation()
    start_pose = np.asarray(start_pose, dtype=np.float64)
    target_pose = np.asarray(target_pose, dtype=np.float64)
    r0 = R.from_matrix(start_pose[:3, :3])
    r1 = R.from_matrix(target_pose[:3, :3])
    if yaw_as_scalar:
        yaw0 = r0.as_euler("xyz")[2]
        yaw1 = r1.as_euler("xyz")[2]
        rest0 = R.from_euler("z", -yaw0) * r0
        rest1 = R.from_euler("z", -yaw1) * r1
        rest = rest0 * R.from_rotvec((rest0.inv() * rest1).as_rotvec() * t)
        rot = (R.from_euler("z", yaw0 + (yaw1 - yaw0) * t) * rest).as_matrix()
    else:
        rot = (r0 * R.from_rotvec((r0.inv() * r1).as_rotvec() * t)).as_matrix()
    pose = np.eye(4)
    pose[:3, :3] = rot
    pose[:3, 3] = start_pose[:3, 3] + (target_pose[:3, 3] - start_pose[:3, 3]) * t
    return pose


def delta_angle_between_mat_rot(P: Any, Q: Any) -> float:
    """The angle in radians of the rotation that takes one 3x3 rotation to the other."""
    np = _np()
    c = (np.trace(np.dot(np.asarray(P), np.asarray(Q).T)) - 1) / 2
    return float(np.arccos(np.clip(c, -1.0, 1.0)))


def distance_between_poses(pose1: Any, pose2: Any) -> Tuple[float, float, float]:
    """How far apart two 4x4 poses are: the translation in metres, the rotation in radians, and
    both in one figure counting a millimetre and a degree alike (the public SDK's "magic mm")."""
    np = _np()
    p1, p2 = np.asarray(pose1, dtype=np.float64), np.asarray(pose2, dtype=np.float64)
    translation = float(np.linalg.norm(p1[:3, 3] - p2[:3, 3]))
    angle = delta_angle_between_mat_rot(p1[:3, :3], p2[:3, :3])
    return translation, angle, translation * 1000 + float(np.rad2deg(angle))


def compose_world_offset(T_abs: Any, T_off_world: Any, reorthonormalize: bool = False) -> Any:
    """A pose moved by an offset given in the world's axes: the offset's rotation applied about
    the pose's own origin, its translation added."""
    np = _np()
    T_abs = np.asarray(T_abs, dtype=np.float64)
    T_off_world = np.asarray(T_off_world, dtype=np.float64)
    rot = T_off_world[:3, :3] @ T_abs[:3, :3]
    if reorthonormalize:
        u, _, vt = np.linalg.svd(rot)
        rot = u @ vt
    out = np.eye(4)
    out[:3, :3] = rot
    out[:3, 3] = T_abs[:3, 3] + T_off_world[:3, 3]
    return out
