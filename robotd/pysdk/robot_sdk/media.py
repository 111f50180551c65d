"""robot.media: the robot's microphone, speaker and camera, as the anchor SDK's media manager offers them."""

import math
import sys
from typing import Any, List, Optional, Sequence

from .errors import RobotError

# Audio is stereo float32 at this rate, both ways, as the public SDK's: (n, 2) arrays.
SAMPLE_RATE = 16000
CHANNELS = 2

# The daemon takes at most 10 seconds of audio (frames) per push.
MAX_PUSH_SAMPLES = 10 * SAMPLE_RATE


class MediaUnavailableError(RobotError):
    """Media were turned off (``media_backend="no_media"`` or ``release_media()``)."""


class Frame:
    """A camera image without numpy: ``shape`` is (height, width, 3), pixels are BGR uint8 as
    OpenCV's. ``numpy.asarray(frame)`` gives the array; ``tobytes()`` the raw pixels."""

    def __init__(self, width: int, height: int, bgr: bytes) -> None:
        self.width, self.height = width, height
        self.shape = (height, width, 3)
        self.dtype = "uint8"
        self._data = bgr

    def tobytes(self) -> bytes:
        """The pixels, row by row, 3 bytes (B, G, R) each."""
        return self._data

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        import numpy

        arr = numpy.frombuffer(self._data, dtype=numpy.uint8).reshape(self.shape)
        return arr.astype(dtype) if dtype is not None else arr.copy()

    def pixel(self, x: int, y: int) -> tuple:
        """The (B, G, R) of pixel (x, y)."""
        i = 3 * (y * self.width + x)
        return tuple(self._data[i:i + 3])

    def tolist(self) -> List[List[List[int]]]:
        """Nested lists [row][column][B, G, R]."""
        d, w = self._data, self.width
        return [[list(d[3 * (y * w + x):3 * (y * w + x) + 3]) for x in range(w)] for y in range(self.height)]


class CameraInfo:
    """The camera's resolution (width, height) and intrinsics K (3x3) and distortion D."""

    def __init__(self, specs: dict) -> None:
        self.name = specs.get("name", "")
        res = specs["default_resolution"]
        self.resolution = (int(res["width"]), int(res["height"]))
        self.framerate = int(res["fps"])
        self.K = [[float(v) for v in row] for row in specs["K"]]
        self.D = [float(v) for v in specs.get("D") or []]


def parse_ppm(data: bytes) -> Frame:
    """Read a binary PPM (P6, 8 bits) into a BGR Frame."""
    parts = []
    i = 0
    while len(parts) < 4:
        while data[i:i + 1].isspace():
            i += 1
        if data[i:i + 1] == b"#":
            while data[i:i + 1] not in (b"\n", b""):
                i += 1
            continue
        j = i
        while not data[j:j + 1].isspace():
            j += 1
        parts.append(data[i:j])
        i = j
    if parts[0] != b"P6" or parts[3] != b"255":
        raise RobotError("the daemon's camera frame is not an 8-bit PPM")
    width, height = int(parts[1]), int(parts[2])
    rgb = data[i + 1:i + 1 + 3 * width * height]
    bgr = bytearray(len(rgb))
    bgr[0::3], bgr[1::3], bgr[2::3] = rgb[2::3], rgb[1::3], rgb[0::3]
    return Frame(width, height, bytes(bgr))


class Media:
    """The robot's audio and camera, through the daemon. Obtained as ``robot.media``."""

    def __init__(self, http: Any, enabled: bool = True) -> None:
        self._http = http
        self._enabled = enabled
        self._camera: Optional[CameraInfo] = None

    def _check(self) -> None:
        if not self._enabled:
            raise MediaUnavailableError(
                "media are off for this Robot (media_backend='no_media' or release_media()): "
                "create Robot() with the default media_backend, or call robot.acquire_media()")

    # --- camera ---------------------------------------------------------------------------------

    @property
    def camera(self) -> CameraInfo:
        """The camera's resolution and calibration."""
        self._check()
        if self._camera is None:
            self._camera = CameraInfo(self._http.request("GET", "/api/camera/specs"))
        return self._camera

    def get_frame(self) -> Any:
        """A camera image, H x W x 3 BGR uint8: a numpy array when the app uses numpy, else a Frame
        (which ``numpy.asarray`` converts). The simulated robot shows a test pattern."""
        self._check()
        frame = parse_ppm(self._http.request_bytes("GET", "/api/camera/frame"))
        if "numpy" in sys.modules:
            import numpy

            return numpy.asarray(frame)
        return frame

    def get_frame_jpeg(self) -> bytes:
        """The camera image as JPEG bytes."""
        self._check()
        return self._http.request_bytes("GET", "/api/camera/frame", query={"format": "jpeg"})

    # --- microphone -----------------------------------------------------------------------------

    def start_recording(self) -> int:
        """Start keeping what the microphone hears (earlier sound is dropped); returns the sample rate."""
        self._check()
        return int(self._http.request("POST", "/api/audio/start_recording")["sample_rate"])

    def stop_recording(self) -> None:
        """Stop recording and drop what was not read."""
        self._check()
        self._http.request("POST", "/api/audio/stop_recording")

    def get_audio_sample(self, max_samples: Optional[int] = None) -> Any:
        """What the microphones heard since the last call, at most ``max_samples`` frames: an
        (n, 2) float32 numpy array of [left, right] frames in [-1, 1] at SAMPLE_RATE Hz when the app
        uses numpy (as the public SDK gives it), else a list of [left, right] lists; None when
        nothing new was heard. Raises RequestRefusedError before ``start_recording()``."""
        self._check()
        query = None
        if max_samples is not None:
            if int(max_samples) < 0:
                raise ValueError("max_samples must be a non-negative number of samples")
            query = {"max": int(max_samples)}
        frames = list(self._http.request("GET", "/api/audio/sample", query=query)["samples"])
        if not frames:
            return None
        if "numpy" in sys.modules:
            import numpy

            return numpy.asarray(frames, dtype=numpy.float32).reshape(-1, CHANNELS)
        return frames

    def get_input_audio_samplerate(self) -> int:
        """The microphone's sample rate."""
        return SAMPLE_RATE

    def get_output_audio_samplerate(self) -> int:
        """The speaker's sample rate."""
        return SAMPLE_RATE

    def get_input_channels(self) -> int:
        """The microphones' channels: 2."""
        return CHANNELS

    def get_output_channels(self) -> int:
        """The speaker's channels: 2."""
        return CHANNELS

    # --- speaker --------------------------------------------------------------------------------

    def start_playing(self) -> None:
        """Get the speaker ready for push_audio_sample: it always is; kept for the anchor's apps."""
        self._check()

    def stop_playing(self) -> None:
        """Stop what the speaker plays and drop what is queued."""
        self._check()
        self._http.request("POST", "/api/audio/stop_sound")

    def push_audio_sample(self, samples: Any) -> int:
        """Queue sound in [-1, 1] at SAMPLE_RATE Hz on the speaker; returns how many frames were
        queued.

        Takes a list or a numpy array: (n, 2) [left, right] frames as the public SDK's, mono (n,)
        (played on both channels), or (n, c) with other channel counts (the first two are kept, a
        single channel is played on both). Long sounds are sent in pieces of at most 10 seconds,
        as the daemon takes them.
        """
        self._check()
        frames = stereo(samples)
        for i, f in enumerate(frames):
            for v in f:
                if not math.isfinite(v):
                    raise ValueError(f"samples[{i}] must be finite numbers")
        for start in range(0, len(frames), MAX_PUSH_SAMPLES):
            self._http.request("POST", "/api/audio/push_sample", {"samples": frames[start:start + MAX_PUSH_SAMPLES]})
        return len(frames)

    def play_sound(self, file: Any) -> float:
        """Play a WAV file on the robot (a path there), or a built-in sound by name (wake_up.wav,
        go_sleep.wav); returns its duration in seconds."""
        self._check()
        import os

        return float(self._http.request("POST", "/api/audio/play_sound", {"file": os.fspath(file)})["duration"])


def stereo(samples: Any) -> List[List[float]]:
    """Sound as a list of [left, right] frames: mono samples play on both channels, frames of more
    than two channels keep their first two."""
    if hasattr(samples, "tolist"):
        samples = samples.tolist()
    out = []
    for s in samples:
        if isinstance(s, (list, tuple)):
            if not s:
                raise ValueError("a frame of no channels")
            out.append([float(s[0]), float(s[1] if len(s) > 1 else s[0])])
        else:
            v = float(s)
            out.append([v, v])
    return out


def mono(samples: Sequence[Any]) -> List[float]:
    """Sound as a flat list of floats, channels averaged."""
    if hasattr(samples, "tolist"):
        samples = samples.tolist()
    out = []
    for s in samples:
        if isinstance(s, (list, tuple)):
            out.append(sum(float(v) for v in s) / len(s) if s else 0.0)
        else:
            out.append(float(s))
    return out
