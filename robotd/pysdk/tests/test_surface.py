"""The anchor SDK's surface under our names, against a real robot-daemon --sim."""

import importlib.util
import math
import threading
import time
import unittest

from robot_sdk import (
    DaemonUnavailableError,
    Frame,
    InterpolationTechnique,
    MediaUnavailableError,
    Move,
    Robot,
    RobotError,
    create_head_pose,
)
from robot_sdk.pose import pose_body

from .daemon import daemon, free_port
from .test_robot import wait_for

HAS_NUMPY = importlib.util.find_spec("numpy") is not None


def _samples(chunk):
    """What get_audio_sample returned, as a flat list (None when nothing new was heard)."""
    if chunk is None:
        return []
    return chunk.reshape(-1).tolist() if hasattr(chunk, "reshape") else list(chunk)


class PoseTest(unittest.TestCase):
    """Poses are the public SDK's: (4, 4) float64 numpy arrays, rotations as scipy builds them."""

    def test_create_head_pose_is_a_numpy_matrix(self):
        import numpy as np
        from scipy.spatial.transform import Rotation as R

        pose = create_head_pose(x=0.01, y=-0.02, z=0.003, roll=5, pitch=-10, yaw=40)
        self.assertIsInstance(pose, np.ndarray)
        self.assertEqual((pose.shape, pose.dtype), ((4, 4), np.float64))
        want = R.from_euler("xyz", [5, -10, 40], degrees=True).as_matrix()
        np.testing.assert_allclose(pose[:3, :3], want, atol=1e-15)
        np.testing.assert_allclose(pose[:, 3], [0.01, -0.02, 0.003, 1])
        np.testing.assert_allclose(create_head_pose(yaw=0.5, degrees=False)[:3, :3],
                                   R.from_euler("z", 0.5).as_matrix(), atol=1e-15)
        self.assertAlmostEqual(create_head_pose(z=10, mm=True)[2, 3], 0.01)

    def test_the_everyday_idiom(self):
        import numpy as np
        from scipy.spatial.transform import Rotation as R

        init = create_head_pose()
        pose = init.copy()
        pose[:3, :3] = R.from_euler("xyz", [20, 0, 0], degrees=True).as_matrix()
        self.assertEqual(pose[:3, :3].shape, (3, 3))
        self.assertTrue(np.array_equal(init, np.eye(4)), "copy() left the original alone")
        self.assertEqual(len(pose_body(pose)["m"]), 16)

    def test_poses_in_every_shape(self):
        yaw = create_head_pose(yaw=30)
        self.assertEqual(pose_body(yaw)["m"], yaw.reshape(16).tolist())
        self.assertEqual(pose_body(yaw.tolist())["m"], yaw.reshape(16).tolist())
        self.assertEqual(pose_body(yaw.flatten())["m"], yaw.reshape(16).tolist())
        self.assertEqual(pose_body({"yaw": 0.5}), {"x": 0.0, "y": 0.0, "z": 0.0, "roll": 0.0, "pitch": 0.0, "yaw": 0.5})
        with self.assertRaisesRegex(ValueError, r"must be a 4x4 matrix, got shape \(3, 3\)"):
            pose_body([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
        with self.assertRaisesRegex(ValueError, "unknown head pose keys"):
            pose_body({"yaw_deg": 30})

    def test_interpolation_helpers(self):
        import numpy as np

        from robot_sdk.utils.interpolation import (distance_between_poses, linear_pose_interpolation,
                                                   minimum_jerk, time_trajectory)

        self.assertEqual(time_trajectory(0.5, InterpolationTechnique.MIN_JERK), 0.5)
        self.assertEqual(time_trajectory(0.25, "ease_in_out"), 0.125)
        self.assertLess(time_trajectory(0.1, InterpolationTechnique.CARTOON), 0)  # the wind-up
        half = linear_pose_interpolation(create_head_pose(), create_head_pose(yaw=40, z=0.02), 0.5)
        np.testing.assert_allclose(half, create_head_pose(yaw=20, z=0.01), atol=1e-12)
        traj = minimum_jerk(np.zeros(2), np.array([1.0, -2.0]), 2.0)
        np.testing.assert_allclose(traj(1.0), [0.5, -1.0])
        np.testing.assert_allclose(traj(3.0), [1.0, -2.0])
        _, angle, magic = distance_between_poses(create_head_pose(), create_head_pose(x=0.01, roll=10))
        self.assertAlmostEqual(angle, math.radians(10))
        self.assertAlmostEqual(magic, 20.0)


class SurfaceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = daemon()

    def setUp(self):
        self.robot = Robot(url=self.daemon.url)
        self.addCleanup(self.robot.close)

    def target(self):
        return self.daemon.get("/api/state/full")

    def test_goto_target_takes_the_anchors_argument_order(self):
        self.robot.set_target(body_yaw=0.3)
        start = time.monotonic()
        self.robot.goto_target(create_head_pose(yaw=10), [0.1, -0.1], 0.3, InterpolationTechnique.EASE_IN_OUT)
        self.assertGreaterEqual(time.monotonic() - start, 0.3)
        state = self.target()
        self.assertAlmostEqual(state["target_head_pose"]["yaw"], math.radians(10), places=9)
        self.assertEqual(state["target_antennas_position"], [0.1, -0.1])
        self.assertEqual(state["target_body_yaw"], 0.0)  # the anchor's default body_yaw=0.0
        with self.assertRaisesRegex(ValueError, "Duration must be positive"):
            self.robot.goto_target(antennas=[0, 0], duration=0)

    def test_matrix_poses_and_numpy_arrays(self):
        import numpy as np

        self.robot.set_target(head=create_head_pose(yaw=25), antennas=np.array([0.2, 0.2]))
        self.assertAlmostEqual(self.target()["target_head_pose"]["yaw"], math.radians(25), places=9)
        pose = self.robot.get_current_head_pose()
        self.assertEqual((type(pose), pose.shape, pose.dtype), (np.ndarray, (4, 4), np.float64))
        self.robot.set_target_head_pose(create_head_pose(pitch=5).tolist())
        self.robot.set_target_antenna_joint_positions([0.3, 0.4])
        self.robot.set_target_body_yaw(0.1)
        state = self.target()
        self.assertAlmostEqual(state["target_head_pose"]["pitch"], math.radians(5), places=9)
        self.assertEqual(state["target_antennas_position"], [0.3, 0.4])
        self.assertAlmostEqual(state["target_body_yaw"], 0.1)
        with self.assertRaises(ValueError):
            self.robot.set_target()

    def test_look_at(self):
        import numpy as np

        pose = self.robot.look_at_world(1, 1, 0, duration=0.2)
        np.testing.assert_allclose(pose, create_head_pose(yaw=45), atol=1e-9)
        self.assertAlmostEqual(self.target()["target_head_pose"]["yaw"], math.pi / 4, places=6)
        only = self.robot.look_at_image(320, 240, perform_movement=False)
        self.assertEqual(only.shape, (4, 4))

    def test_motion_recording(self):
        self.robot.start_recording()
        self.robot.goto_target(antennas=[0.4, -0.4], duration=0.2)
        frames = self.robot.stop_recording()
        self.assertGreater(len(frames), 10)
        self.assertEqual(frames[-1]["antennas"], [0.4, -0.4])
        self.assertEqual(len(frames[-1]["head"]), 4)

    def test_single_motors_and_gravity_compensation(self):
        self.robot.disable_motors(["left_antenna"])
        motors = self.daemon.get("/api/motors/status")["motors"]
        self.assertFalse(motors["left_antenna"])
        self.assertTrue(motors["right_antenna"])
        self.robot.enable_motors()
        self.assertTrue(all(self.daemon.get("/api/motors/status")["motors"].values()))
        self.robot.enable_gravity_compensation()
        self.assertEqual(self.daemon.get("/api/motors/status")["mode"], "gravity_compensation")
        self.robot.disable_gravity_compensation()
        self.assertEqual(self.daemon.get("/api/motors/status")["mode"], "enabled")

    def test_automatic_body_yaw(self):
        self.robot.set_automatic_body_yaw(True)
        self.robot.set_target(head=create_head_pose(yaw=100), body_yaw=0.0)
        self.assertAlmostEqual(self.target()["target_body_yaw"], math.radians(35), places=6)
        self.robot.set_target(head=create_head_pose(yaw=0), body_yaw=0.0)

    def test_joint_positions_on_the_simulation(self):
        # The head's joints are what its motors would read: the inverse kinematics of its pose.
        self.robot.goto_target(create_head_pose(), antennas=[0.1, -0.1], duration=0.3)
        head, antennas = self.robot.get_current_joint_positions()
        self.assertEqual(len(head), 7)
        self.assertAlmostEqual(head[0], 0.0)  # the body's yaw
        self.assertEqual(antennas, [0.1, -0.1])
        self.robot.goto_target(create_head_pose(z=0.01), duration=0.3)
        raised, _ = self.robot.get_current_joint_positions()
        self.assertTrue(all(abs(a - b) > 1e-3 for a, b in zip(head[1:], raised[1:])), (head, raised))

    def test_play_move_and_cancel(self):
        class Wave(Move):
            @property
            def duration(self):
                return 0.5

            def evaluate(self, t):
                return create_head_pose(yaw=10 * t), [t, -t], None

        self.robot.play_move(Wave(), play_frequency=50)
        self.assertGreater(self.target()["target_antennas_position"][0], 0.4)

        class Long(Wave):
            @property
            def duration(self):
                return 30.0

        threading.Timer(0.3, self.robot.cancel_move).start()
        start = time.monotonic()
        self.robot.play_move(Long(), play_frequency=50)
        self.assertLess(time.monotonic() - start, 5)

    def test_media(self):
        frame = self.robot.media.get_frame()
        self.assertIsInstance(frame, Frame) if not HAS_NUMPY else None
        self.assertEqual(tuple(frame.shape), (480, 640, 3))
        if isinstance(frame, Frame):
            self.assertEqual(frame.pixel(10, 10), (255, 255, 255))  # the white bar
            self.assertEqual(frame.pixel(630, 10), (0, 0, 0))  # the black bar
        self.assertTrue(self.robot.media.get_frame_jpeg().startswith(b"\xff\xd8"))
        self.assertEqual(self.robot.media.camera.resolution, (640, 480))
        self.robot.media.start_recording()
        self.addCleanup(self.robot.media.stop_recording)
        self.assertGreater(self.robot.media.play_sound("wake_up.wav"), 0.1)
        heard = wait_for(lambda: [s for s in (_samples(self.robot.media.get_audio_sample())) if abs(s) > 0.05], timeout=2)
        self.assertTrue(heard, "the built-in sound was not heard back")
        self.robot.media.stop_playing()
        self.assertEqual(self.robot.media.get_input_audio_samplerate(), 16000)


class ConstructorTest(unittest.TestCase):
    def test_the_anchors_keyword_arguments(self):
        d = daemon()
        with Robot(robot_name="robot", host="127.0.0.1", port=d.port, connection_mode="network", spawn_daemon=False,
                   use_sim=True, timeout=3.0, automatic_body_yaw=False, log_level="DEBUG", media_backend="no_media") as robot:
            self.assertEqual(robot.url, d.url)
            self.assertFalse(d.get("/api/state/full")["automatic_body_yaw"])
            with self.assertRaisesRegex(MediaUnavailableError, "no_media"):
                robot.media.get_frame()
            self.assertTrue(d.get("/api/media/status")["released"], "no_media releases the daemon's devices")
            robot.acquire_media()
            self.assertFalse(d.get("/api/media/status")["released"])
            self.assertEqual(robot.media.get_input_channels(), 2)
            robot.release_media()
            self.assertTrue(robot.media_released)
        self.assertFalse(d.get("/api/media/status")["released"], "leaving the with block takes the devices back")
        with Robot(port=d.port, connection_mode="localhost_only") as robot:
            self.assertEqual(robot.url, d.url)
            self.assertTrue(d.get("/api/state/full")["automatic_body_yaw"])
        with self.assertWarns(DeprecationWarning):
            Robot(port=d.port, localhost_only=True).close()
        with self.assertRaisesRegex(ValueError, "connection_mode"):
            Robot(port=d.port, connection_mode="carrier-pigeon")

    def test_spawn_daemon_without_a_daemon(self):
        with self.assertRaisesRegex(DaemonUnavailableError, "robot-daemon --sim"):
            Robot(port=free_port(), spawn_daemon=True)

if __name__ == "__main__":
    unittest.main()
