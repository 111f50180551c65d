"""robot_sdk.media.audio_utils: the robot's sound card by USB id, WAV files of what was heard."""

import os
import tempfile
import unittest

from robot_sdk.media.audio_utils import get_respeaker_card_number, load_wav, save_audio_to_wav


class AudioUtilsTest(unittest.TestCase):
    def test_the_robots_card_is_found_by_its_usb_id(self):
        root = tempfile.mkdtemp()
        for n, usbid in ((0, "1d6b:0002"), (2, "38fb:1001")):
            os.makedirs(os.path.join(root, f"card{n}"))
            with open(os.path.join(root, f"card{n}", "usbid"), "w") as f:
                f.write(usbid + "\n")
        self.assertEqual(get_respeaker_card_number(root), 2)
        os.remove(os.path.join(root, "card2", "usbid"))
        self.assertEqual(get_respeaker_card_number(root), 0, "without the robot's card: the default one")
        self.assertEqual(get_respeaker_card_number(os.path.join(root, "nope")), -1, "no ALSA at all")

    def test_stereo_frames_round_trip_through_a_wav_file(self):
        path = os.path.join(tempfile.mkdtemp(), "heard.wav")
        save_audio_to_wav([[0.5, -0.25], [1.5, -2.0]], 16000, path)
        frames, rate = load_wav(path)
        self.assertEqual(rate, 16000)
        self.assertEqual(len(frames), 2)
        self.assertAlmostEqual(frames[0][0], 0.5, places=3)
        self.assertAlmostEqual(frames[0][1], -0.25, places=3)
        self.assertAlmostEqual(frames[1][0], 1.0, places=3, msg="clipped to [-1, 1]")
        with self.assertRaisesRegex(ValueError, "frame 1 has 1 channels"):
            save_audio_to_wav([[0.1, 0.2], [0.3]], 16000, path)


if __name__ == "__main__":
    unittest.main()
