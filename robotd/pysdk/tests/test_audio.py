"""Robot audio: recording, pushing samples and playing sounds. The simulated robot's speaker plays
into its microphone in real time, so what is played is heard back."""

import math
import os
import struct
import tempfile
import time
import unittest
import wave
from unittest import mock

from robot_sdk import SAMPLE_RATE, RequestRefusedError, Robot
from robot_sdk import media as robot_module

from .daemon import daemon


def tone(seconds, freq=440.0, amplitude=0.5, rate=SAMPLE_RATE):
    return [amplitude * math.sin(2 * math.pi * freq * i / rate) for i in range(int(seconds * rate))]


def rms(samples):
    return math.sqrt(sum(s * s for s in samples) / len(samples)) if samples else 0.0


class AudioTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = daemon()

    def setUp(self):
        self.robot = Robot(url=self.daemon.url)
        self.addCleanup(self.robot.close)
        self.addCleanup(self.robot.media.stop_recording)

    def record(self, seconds):
        """The left channel of everything heard during the next `seconds`."""
        heard = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            time.sleep(0.05)
            frames = self.robot.media.get_audio_sample()
            if frames is not None:
                self.assertEqual(len(frames[0]), 2, "a frame is [left, right]")
                heard += [float(f[0]) for f in frames]
        return heard

    def test_reading_before_recording_is_refused(self):
        self.robot.media.stop_recording()
        with self.assertRaises(RequestRefusedError) as cm:
            self.robot.media.get_audio_sample()
        self.assertEqual(cm.exception.status, 400)
        self.assertIn("start_recording", cm.exception.detail)

    def test_pushed_samples_are_heard_back(self):
        self.assertEqual(self.robot.media.start_recording(), SAMPLE_RATE)
        sent = tone(0.3)
        self.assertEqual(self.robot.push_audio_sample(sent), len(sent))
        heard = self.record(0.6)
        loud = [s for s in heard if abs(s) > 0.01]
        self.assertGreater(len(loud), len(sent) * 0.8, f"heard {len(heard)} samples, {len(loud)} loud")
        self.assertAlmostEqual(rms(loud), 0.5 / math.sqrt(2), delta=0.05)

    def test_max_samples_limits_a_read(self):
        self.robot.media.start_recording()
        self.robot.push_audio_sample(tone(0.2))
        time.sleep(0.3)
        self.assertEqual(len(self.robot.media.get_audio_sample(max_samples=100)), 100)
        self.assertGreater(len(self.robot.media.get_audio_sample()), 0)
        with self.assertRaises(ValueError):
            self.robot.media.get_audio_sample(max_samples=-1)

    def test_long_sounds_are_pushed_in_pieces_and_arrive_in_order(self):
        ramp = [i / 2500 for i in range(2500)]
        self.robot.media.start_recording()
        with mock.patch.object(robot_module, "MAX_PUSH_SAMPLES", 1000):
            self.robot.push_audio_sample(ramp)
        heard = [s for s in self.record(0.4) if s != 0.0]
        self.assertEqual(len(heard), 2499)  # the ramp's first sample is 0
        self.assertTrue(all(b > a for a, b in zip(heard, heard[1:])), "samples out of order")

    def test_non_finite_samples_are_refused(self):
        with self.assertRaisesRegex(ValueError, r"samples\[1\]"):
            self.robot.push_audio_sample([0.0, float("nan")])

    def test_stereo_frames_keep_their_channels(self):
        self.robot.media.start_recording()
        self.assertEqual(self.robot.media.get_input_channels(), 2)
        self.robot.push_audio_sample([[0.5, -0.25]] * 1600)
        heard = []
        deadline = time.monotonic() + 1
        while time.monotonic() < deadline and len([f for f in heard if f[0] != 0]) < 1600:
            time.sleep(0.05)
            sample = self.robot.media.get_audio_sample()  # None, a list, or numpy once imported
            heard += [list(f) for f in (sample if sample is not None else [])]
        loud = [f for f in heard if f[0] != 0]
        self.assertEqual(len(loud), 1600)
        self.assertTrue(all(abs(f[0] - 0.5) < 1e-6 and abs(f[1] + 0.25) < 1e-6 for f in loud), loud[:3])

    def test_play_sound_plays_a_wav_file(self):
        path = os.path.join(tempfile.mkdtemp(), "beep.wav")
        self.addCleanup(os.remove, path)
        with wave.open(path, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(8000)
            w.writeframes(b"".join(struct.pack("<h", int(s * 32767)) for s in tone(0.25, rate=8000)))
        self.robot.media.start_recording()
        self.assertAlmostEqual(self.robot.play_sound(path), 0.25, places=2)
        heard = self.record(0.5)
        self.assertGreater(rms([s for s in heard if abs(s) > 0.01]), 0.3)

    def test_play_sound_of_a_missing_file(self):
        with self.assertRaises(RequestRefusedError) as cm:
            self.robot.play_sound("/nonexistent/beep.wav")
        self.assertEqual(cm.exception.status, 404)
        self.assertIn("/nonexistent/beep.wav", cm.exception.detail)


if __name__ == "__main__":
    unittest.main()
