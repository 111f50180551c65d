"""Frames and sound on the robot come from the daemon's media socket, as captured; a client
elsewhere (media_backend="webrtc" here) gets the same over WebRTC, or over HTTP without aiortc."""

import os
import socket
import sys
import tempfile
import threading
import time
import unittest
import unittest.mock

from robot_sdk import Robot
from robot_sdk.media import Frame, Media, MediaUnavailableError, _open_stream, webrtc

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

    @unittest.skipUnless(webrtc.available(), "aiortc is not installed (Debian's python3-aiortc)")
    def test_remote_frames_come_over_webrtc_in_the_same_shape(self):
        with Robot(url=self.daemon.url, media_backend="webrtc") as robot:
            self.assertEqual(robot.media._socket(), "")
            self.assertEqual(robot.media.transport, "webrtc")
            first = robot.media.get_frame()
            self.assertEqual(tuple(first.shape), (480, 640, 3))
            deadline = time.monotonic() + 5
            while pixels(robot.media.get_frame()) == pixels(first):
                self.assertLess(time.monotonic(), deadline, "the picture over WebRTC does not move")

    def test_without_aiortc_remote_frames_come_over_http(self):
        with Robot(url=self.daemon.url) as robot:
            media = Media(robot._http, transport="http")
            self.assertEqual(media.transport, "http")
            self.assertEqual(tuple(media.get_frame().shape), (480, 640, 3))

    def test_without_aiortc_auto_says_so_and_webrtc_names_it(self):
        with unittest.mock.patch.dict(sys.modules, {"aiortc": None}):  # import aiortc fails
            with Robot(url=self.daemon.url) as robot:
                auto = Media(robot._http, transport="auto")
                auto._socket_path = ""  # as from a laptop
                with self.assertLogs("robot_sdk", "WARNING") as logs:
                    self.assertEqual(auto.transport, "http")
                self.assertIn("aiortc is not installed", logs.output[0])
                forced = Media(robot._http, transport="webrtc")
                with self.assertRaisesRegex(MediaUnavailableError, "needs aiortc.*apt install python3-aiortc"):
                    forced.get_frame()

    def test_local_sound_round_trip(self):
        with Robot(url=self.daemon.url, media_backend="local") as robot:
            robot.media.start_recording()
            robot.media.push_audio_sample([[0.25, 0.75]] * 800)
            heard = []
            deadline = time.monotonic() + 3
            while time.monotonic() < deadline and len(heard) < 800:
                time.sleep(0.02)
                sample = robot.media.get_audio_sample()  # None, a list, or numpy once imported
                heard += [f for f in (sample if sample is not None else []) if f[1] != 0]
            self.assertEqual(len(heard), 800)
            self.assertAlmostEqual(float(heard[0][0]), 0.25, places=6)
            self.assertAlmostEqual(float(heard[0][1]), 0.75, places=6)
            robot.media.stop_recording()


class MediaRefusalTest(unittest.TestCase):
    def test_a_refused_client_reads_the_daemons_reason(self):
        # The daemon refuses another user's client as soon as it connects, and hangs up before
        # reading the stream's name: the client's write may fail, and it must still say why.
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "media.sock")
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.bind(path)
            server.listen(64)

            def refuse():
                while True:
                    try:
                        c, _ = server.accept()
                    except OSError:
                        return
                    try:
                        c.sendall(b"ERR user 1001 is not the daemon's user\n")
                    except OSError:
                        pass  # the client gave up first
                    c.close()

            threading.Thread(target=refuse, daemon=True).start()
            try:
                for stream, magic in [("audio", b"RBA1")] * 100 + [("play", b"")] * 20:
                    try:
                        _open_stream(path, stream, magic).close()
                    except MediaUnavailableError as e:
                        self.assertIn("not the daemon's user", str(e))
                        continue
                    if magic:
                        self.fail(f"the {stream} stream opened on a refusing daemon")
            finally:
                server.close()


if __name__ == "__main__":
    unittest.main()
