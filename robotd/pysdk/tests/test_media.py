"""Frames and sound on the robot come from the daemon's media socket, as captured; a client
elsewhere (media_backend="webrtc" here) gets the same over HTTP."""

import time
import unittest

from robot_sdk import Robot
from robot_sdk.media import Frame

from .daemon import daemon


def pixels(frame):
    return frame.tobytes() if isinstance(frame, Frame) else bytes(frame.tobytes())


class MediaTransportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = daemon()

    def test_local_frames_come_from_the_socket_and_move_on(self):
        with Robot(url=self.daemon.url, media_backend="local") as robot:
            self.assertTrue(robot.media._socket().endswith("media.sock"))
            start = time.monotonic()
            frames = [robot.media.get_frame() for _ in range(10)]
            elapsed = time.monotonic() - start
            self.assertEqual(tuple(frames[0].shape), (480, 640, 3))
            # Each call gives a newer frame: ten take about a third of a second at 30 fps.
            self.assertGreater(elapsed, 0.2)
            self.assertLess(elapsed, 3.0)
            # The drawn camera's white square crosses the image: the last frame is not the first.
            self.assertNotEqual(pixels(frames[0]), pixels(frames[-1]))

    def test_remote_frames_come_over_http_in_the_same_shape(self):
        with Robot(url=self.daemon.url, media_backend="webrtc") as robot:
            self.assertEqual(robot.media._socket(), "")
            frame = robot.media.get_frame()
            self.assertEqual(tuple(frame.shape), (480, 640, 3))

    def test_local_sound_round_trip(self):
        with Robot(url=self.daemon.url, media_backend="local") as robot:
            robot.media.start_recording()
            robot.media.push_audio_sample([[0.25, 0.75]] * 800)
            heard = []
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline and len(heard) < 800:
                time.sleep(0.02)
                heard += [f for f in (robot.media.get_audio_sample() or []) if f[1] != 0]
            self.assertEqual(len(heard), 800)
            self.assertAlmostEqual(float(heard[0][0]), 0.25, places=6)
            self.assertAlmostEqual(float(heard[0][1]), 0.75, places=6)
            robot.media.stop_recording()


if __name__ == "__main__":
    unittest.main()
