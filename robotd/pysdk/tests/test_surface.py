"""The anchor SDK's surface under our names, against a real robot-daemon --sim."""

import importlib.util
import math
import threading
import time
import unittest

from robot_sdk import (
    DaemonUnavailableError,
    Frame,
    HeadPose,
    InterpolationTechnique,
    MediaUnavailableError,
    Move,
    Request,
    Robot,
    RobotError,
    SettingsApp,
    create_head_pose,
)
from robot_sdk.pose import pose_body
from robot_sdk.settings import JSONResponse

from .daemon import daemon, free_port
from .test_robot import wait_for

HAS_NUMPY = importlib.util.find_spec("numpy") is not None


class FakeArray:
    """What the SDK needs of a numpy array: tolist(). The SDK never imports numpy."""

    def __init__(self, rows):
        self.rows = rows

    def tolist(self):
        return self.rows


class PoseTest(unittest.TestCase):
    def test_create_head_pose_takes_degrees_by_default(self):
        self.assertAlmostEqual(create_head_pose(yaw=30).yaw, math.radians(30))
        self.assertAlmostEqual(create_head_pose(yaw=0.5, degrees=False).yaw, 0.5)
        self.assertAlmostEqual(create_head_pose(z=10, mm=True).z, 0.01)

    def test_matrix_round_trip(self):
        p = create_head_pose(x=0.01, y=-0.02, z=0.003, roll=5, pitch=-10, yaw=40)
        m = p.tolist()
        self.assertEqual(len(m), 4)
        self.assertEqual(m[3], [0.0, 0.0, 0.0, 1.0])
        back = HeadPose.from_matrix(m)
        for k in ("x", "y", "z", "roll", "pitch", "yaw"):
            self.assertAlmostEqual(getattr(back, k), getattr(p, k), places=12)
        self.assertEqual(p.shape, (4, 4))
        self.assertAlmostEqual(p[0, 3], 0.01)

    def test_poses_in_every_shape(self):
        yaw = create_head_pose(yaw=30)
        self.assertEqual(pose_body(yaw)["yaw"], yaw.yaw)
        self.assertEqual(len(pose_body(yaw.tolist())["m"]), 16)
        self.assertEqual(len(pose_body(FakeArray(yaw.tolist()))["m"]), 16)
        self.assertEqual(len(pose_body(yaw.flatten())["m"]), 16)
        with self.assertRaisesRegex(ValueError, "must be 4x4"):
            pose_body([[1, 0, 0], [0, 1, 0], [0, 0, 1]])
        with self.assertRaisesRegex(ValueError, "unknown head pose keys"):
            pose_body({"yaw_deg": 30})

    @unittest.skipUnless(HAS_NUMPY, "numpy is not installed for this Python")
    def test_numpy_asarray_of_a_pose(self):
        import numpy

        arr = numpy.asarray(create_head_pose(yaw=90))
        self.assertEqual(arr.shape, (4, 4))
        self.assertAlmostEqual(arr[1, 0], 1.0)


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

    def test_matrix_poses_and_numpy_like_arrays(self):
        c, s = math.cos(math.radians(25)), math.sin(math.radians(25))
        self.robot.set_target(head=FakeArray([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]),
                              antennas=FakeArray([0.2, 0.2]))
        self.assertAlmostEqual(self.target()["target_head_pose"]["yaw"], math.radians(25), places=9)
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
        pose = self.robot.look_at_world(1, 1, 0, duration=0.2)
        self.assertAlmostEqual(pose.yaw, math.pi / 4, places=9)
        self.assertAlmostEqual(self.target()["target_head_pose"]["yaw"], math.pi / 4, places=6)
        only = self.robot.look_at_image(320, 240, perform_movement=False)
        self.assertIsInstance(only, HeadPose)

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

    def test_joint_positions_raise_a_clear_error_on_the_simulation(self):
        with self.assertRaisesRegex(RobotError, "does not report head joint angles"):
            self.robot.get_current_joint_positions()

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
        heard = wait_for(lambda: [f for f in (self.robot.media.get_audio_sample() or []) if abs(f[0]) > 0.05], timeout=2)
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


class PydanticLikeModel:
    """A model with pydantic v1's class interface (parse_obj, __fields__), as the SDK finds one."""

    __fields__ = {"enabled": bool}

    def __init__(self, enabled):
        self.enabled = enabled

    @classmethod
    def parse_obj(cls, data):
        if not isinstance(data.get("enabled"), bool):
            raise ValidationLike([{"loc": ("enabled",), "msg": "value could not be parsed to a boolean", "type": "type_error.bool"}])
        return cls(data["enabled"])

    def json(self):
        return '{"enabled": %s}' % ("true" if self.enabled else "false")


class ValidationLike(Exception):
    def __init__(self, errs):
        super().__init__("invalid")
        self._errs = errs

    def errors(self):
        return self._errs


class SettingsTest(unittest.TestCase):
    def call(self, app, method, path, body=None, query=None):
        route, params, _ = app.match(method, path)
        return app.call(route, Request(method, path, query or {}, {}, body, params))

    def test_fastapi_style_parameters(self):
        app = SettingsApp()

        @app.post("/antennas")
        def antennas(state: PydanticLikeModel):
            return state

        @app.get("/items/{item_id}")
        def item(item_id: int, q: str = "none", scale: float = 1.0):
            return {"item_id": item_id, "q": q, "scaled": item_id * scale}

        @app.post("/raw")
        def raw(body: dict):
            return JSONResponse({"got": body}, status_code=201)

        @app.post("/old")
        def old(request):
            return {"json": request.json}

        self.assertEqual(self.call(app, "POST", "/antennas", {"enabled": False}), (200, {"enabled": False}))
        status, body = self.call(app, "POST", "/antennas", {"enabled": "maybe"})
        self.assertEqual(status, 422)
        self.assertEqual(body["detail"][0]["loc"], ["body", "enabled"])
        self.assertEqual(self.call(app, "GET", "/items/7", query={"scale": "0.5"}), (200, {"item_id": 7, "q": "none", "scaled": 3.5}))
        status, body = self.call(app, "GET", "/items/seven")
        self.assertEqual((status, body["detail"][0]["loc"]), (422, ["path", "item_id"]))
        status, resp = self.call(app, "POST", "/raw", {"a": 1})
        self.assertEqual((status, resp.body), (201, b'{"got": {"a": 1}}'))
        self.assertEqual(self.call(app, "POST", "/old", {"x": 1}), (200, {"json": {"x": 1}}))

    @unittest.skipUnless(importlib.util.find_spec("pydantic"), "pydantic is not installed for this Python")
    def test_a_real_pydantic_model(self):
        from pydantic import BaseModel

        class State(BaseModel):
            enabled: bool

        app = SettingsApp()

        @app.post("/s")
        def s(state: State):
            return state

        self.assertEqual(self.call(app, "POST", "/s", {"enabled": True}), (200, {"enabled": True}))
        self.assertEqual(self.call(app, "POST", "/s", {"enabled": []})[0], 422)


if __name__ == "__main__":
    unittest.main()
