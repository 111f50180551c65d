"""robot.media: the robot's microphone, speaker and camera, as the anchor SDK's media manager offers them."""

import array
import collections
import ipaddress
import logging
import math
import os
import socket
import struct
import sys
import threading
from typing import Any, Deque, List, Optional, Sequence

from ..errors import RequestRefusedError, RobotError
from . import webrtc as _webrtc

logger = logging.getLogger("robot_sdk")

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


_VIDEO_HEADER = struct.Struct("<4sIIQq")  # "RBF1", width, height, seq, captured (Unix ns)
_AUDIO_HEADER = struct.Struct("<4sIq")  # "RBA1", frames, captured
_PLAY_HEADER = struct.Struct("<4sI")  # "RBP1", frames
_KEPT_FRAMES = 30 * SAMPLE_RATE  # what a recording keeps unread


def _read_exact(sock: socket.socket, n: int) -> bytearray:
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise ConnectionError("the daemon closed the media socket")
        got += k
    return buf


def _open_stream(path: str, stream: str, magic: bytes) -> socket.socket:
    """Connects to the daemon's media socket and asks for a stream; raises with the daemon's
    reason when it refuses."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    try:
        sock.sendall(stream.encode() + b"\n")
    except (BrokenPipeError, ConnectionResetError) as e:
        # The daemon refuses a client (another user) and hangs up before reading the stream's
        # name: its reason is still in the socket.
        sock.settimeout(1.0)
        try:
            _raise_if_refused(sock)
        except OSError:
            pass
        sock.close()
        raise ConnectionError(f"the daemon closed the media socket: {e}") from e
    if magic:
        _raise_if_refused(sock)
    return sock


def _raise_if_refused(sock: socket.socket) -> None:
    """Raises with the daemon's reason when the stream begins with its refusal, "ERR <reason>"."""
    if sock.recv(4, socket.MSG_PEEK) == b"ERR ":
        line = sock.makefile("rb").readline().decode(errors="replace").strip()
        sock.close()
        raise MediaUnavailableError(line[4:])


class _FrameReader(threading.Thread):
    """Keeps the newest frame of the daemon's video stream."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(daemon=True, name="robot_sdk-frames")
        self.sock = sock
        self.latest: Optional[tuple] = None  # (width, height, bgr bytes, seq, captured ns)
        self.error: Optional[BaseException] = None
        self.cond = threading.Condition()

    def run(self) -> None:
        try:
            while True:
                magic, w, h, seq, captured = _VIDEO_HEADER.unpack(_read_exact(self.sock, _VIDEO_HEADER.size))
                if magic != b"RBF1":
                    raise RobotError(f"the media socket sent {magic!r}, not a frame")
                data = _read_exact(self.sock, w * h * 3)
                with self.cond:
                    self.latest = (w, h, data, seq, captured)
                    self.cond.notify_all()
        except BaseException as e:  # the socket closed: get_frame says why
            with self.cond:
                self.error = e
                self.cond.notify_all()

    def frame(self, after_seq: int, timeout: float) -> tuple:
        with self.cond:
            self.cond.wait_for(lambda: self.error is not None or (self.latest is not None and self.latest[3] > after_seq), timeout)
            if self.latest is None or self.latest[3] <= after_seq:
                if self.error is not None:
                    raise MediaUnavailableError(f"the camera stream ended: {self.error}")
                raise MediaUnavailableError(f"no camera frame within {timeout:g} s")
            return self.latest


class _SoundReader(threading.Thread):
    """Collects the daemon's audio stream while recording."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(daemon=True, name="robot_sdk-audio")
        self.sock = sock
        self.chunks: Deque[bytes] = collections.deque()
        self.frames = 0
        self.lock = threading.Lock()

    def run(self) -> None:
        try:
            while True:
                magic, n, _ = _AUDIO_HEADER.unpack(_read_exact(self.sock, _AUDIO_HEADER.size))
                if magic != b"RBA1":
                    return
                data = bytes(_read_exact(self.sock, n * CHANNELS * 4))
                with self.lock:
                    self.chunks.append(data)
                    self.frames += n
                    while self.frames > _KEPT_FRAMES:
                        self.frames -= len(self.chunks.popleft()) // (CHANNELS * 4)
        except (OSError, ConnectionError, struct.error):
            return

    def take(self, max_frames: Optional[int]) -> bytes:
        with self.lock:
            data = b"".join(self.chunks)
            self.chunks.clear()
            if max_frames is not None and len(data) > max_frames * CHANNELS * 4:
                keep = data[max_frames * CHANNELS * 4:]
                data = data[:max_frames * CHANNELS * 4]
                self.chunks.append(keep)
            self.frames = sum(len(c) for c in self.chunks) // (CHANNELS * 4)
            return data


class Media:
    """The robot's audio and camera, through the daemon. Obtained as ``robot.media``.

    On the robot (a daemon on loopback) frames and sound come from the daemon's media socket as
    it captured them, with no encoding; elsewhere the camera and microphones come over WebRTC
    (with aiortc installed; else over HTTP, a frame per request). The speaker is played through
    the API from anywhere but the robot. ``transport`` forces one: "local" (the socket), "webrtc"
    or "http"; "auto" picks."""

    def __init__(self, http: Any, enabled: bool = True, transport: str = "auto") -> None:
        self._http = http
        self._enabled = enabled
        self._camera: Optional[CameraInfo] = None
        self._transport = transport
        self._socket_path: Optional[str] = None
        self._frames: Optional[_FrameReader] = None
        self._last_seq = 0
        self._sound: Optional[_SoundReader] = None
        self._play: Optional[socket.socket] = None
        self._rtc: Optional[_webrtc.WebRTCStream] = None
        self._rtc_recording = False
        self._lock = threading.Lock()

    @property
    def transport(self) -> str:
        """How frames and sound come from the daemon: "local" (its media socket), "webrtc" or
        "http"."""
        if self._socket():
            return "local"
        return "webrtc" if self._use_webrtc() else "http"

    def _use_webrtc(self) -> bool:
        if self._transport == "webrtc":
            return True
        if self._transport != "auto" or self._socket():
            return False
        if not _webrtc.available():
            if self._transport == "auto":
                logger.warning("aiortc is not installed: the robot's camera and microphones come over HTTP, "
                               "a frame per request (apt install python3-aiortc, or pip install aiortc, for WebRTC)")
                self._transport = "http"
            return False
        return True

    def _webrtc(self) -> _webrtc.WebRTCStream:
        """The WebRTC connection to the daemon, made on first use and again after it ended."""
        with self._lock:
            if self._rtc is not None and self._rtc.error is not None:
                self._rtc.close()
                self._rtc = None
            if self._rtc is None:
                try:
                    self._rtc = _webrtc.WebRTCStream(self._http, SAMPLE_RATE, CHANNELS)
                except _webrtc.WebRTCUnavailableError as e:
                    raise MediaUnavailableError(str(e)) from e
                self._last_seq = 0  # a new connection numbers its frames from 1
                self._rtc.record(self._rtc_recording)
            return self._rtc

    def _socket(self) -> str:
        """The daemon's media socket, or "" when frames and sound go over HTTP."""
        if self._socket_path is None:
            self._socket_path = ""
            if self._transport in ("auto", "local") and _is_loopback(getattr(self._http, "_host", "")):
                try:
                    path = self._http.request("GET", "/api/media/ipc")["socket"]
                    if os.path.exists(path):
                        self._socket_path = path
                except RobotError:
                    pass
            if self._transport == "local" and not self._socket_path:
                raise MediaUnavailableError("media_backend='local': the daemon's media socket is not reachable from here")
        return self._socket_path

    def close(self) -> None:
        """Close the streams to the daemon (the Robot closes them when it closes)."""
        with self._lock:
            for s in (self._frames.sock if self._frames else None, self._sound.sock if self._sound else None, self._play):
                if s is not None:
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    s.close()
            self._frames, self._sound, self._play = None, None, None
            rtc, self._rtc = self._rtc, None
        if rtc is not None:
            rtc.close()

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
        """The next camera image, H x W x 3 BGR uint8: a numpy array when the app uses numpy, else
        a Frame (which ``numpy.asarray`` converts). Each call gives a frame newer than the last
        call's, waiting for it if needed. The simulated robot shows a test pattern."""
        self._check()
        path = self._socket()
        if path:
            with self._lock:
                if self._frames is None or self._frames.error is not None:
                    self._frames = _FrameReader(_open_stream(path, "video", b"RBF1"))
                    self._frames.start()
                reader = self._frames
            w, h, data, seq, _ = reader.frame(self._last_seq, 5.0)
            self._last_seq = seq
            frame = Frame(w, h, bytes(data))
        elif self._use_webrtc():
            try:
                w, h, data, seq, _ = self._webrtc().frame(self._last_seq, 5.0)
            except RobotError as e:
                raise MediaUnavailableError(f"{e}{self._device_trouble('camera')}") from e
            self._last_seq = seq
            frame = Frame(w, h, data)
        else:
            frame = parse_ppm(self._http.request_bytes("GET", "/api/camera/frame"))
        if "numpy" in sys.modules:
            import numpy

            return numpy.asarray(frame)
        return frame

    def _device_trouble(self, device: str) -> str:
        """Why the daemon's camera (or microphone) gives nothing, as its /api/media/devices says,
        or ""."""
        try:
            status = self._http.request("GET", "/api/media/devices").get(device) or {}
        except RobotError:
            return ""
        return f": the robot says: {status['error']}" if status.get("error") else ""

    def get_frame_jpeg(self) -> bytes:
        """The camera image as JPEG bytes."""
        self._check()
        return self._http.request_bytes("GET", "/api/camera/frame", query={"format": "jpeg"})

    # --- microphone -----------------------------------------------------------------------------

    def start_recording(self) -> int:
        """Start keeping what the microphone hears (earlier sound is dropped); returns the sample rate."""
        self._check()
        path = self._socket()
        if path:
            with self._lock:
                if self._sound is None:
                    self._sound = _SoundReader(_open_stream(path, "audio", b"RBA1"))
                    self._sound.start()
                else:
                    self._sound.take(None)
            return SAMPLE_RATE
        if self._use_webrtc():
            rtc = self._webrtc()
            if not rtc.sends("audio"):
                raise MediaUnavailableError(f"the robot sends no microphones over WebRTC{self._device_trouble('microphone')}")
            rtc.record(True)
            self._rtc_recording = True
            return SAMPLE_RATE
        return int(self._http.request("POST", "/api/audio/start_recording")["sample_rate"])

    def stop_recording(self) -> None:
        """Stop recording and drop what was not read."""
        self._check()
        with self._lock:
            sound, self._sound = self._sound, None
        if sound is not None:
            sound.sock.close()
            return
        if self._use_webrtc():
            self._rtc_recording = False
            if self._rtc is not None:
                self._rtc.record(False)
            return
        if not self._socket():
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
        if self._socket():
            with self._lock:
                sound = self._sound
            if sound is None:
                raise RequestRefusedError("GET", "media socket", 400, "recording is not started: call start_recording first")
            return _frames_of(sound.take(max_samples))
        if self._use_webrtc():
            if not self._rtc_recording:
                raise RequestRefusedError("GET", "webrtc", 400, "recording is not started: call start_recording first")
            try:
                data = self._webrtc().take(max_samples)
            except RobotError as e:
                raise MediaUnavailableError(str(e)) from e
            return _frames_of(data)
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

    def get_DoA(self) -> Optional[tuple]:
        """The direction of arrival of sound from the robot's audio board: (angle in radians, 0
        left, π/2 front, π right; whether it hears speech), or None when the robot has no such
        board (the daemon's log says why)."""
        self._check()
        doa = self._http.request("GET", "/api/state/doa")
        if doa is None:
            return None
        return float(doa["angle"]), bool(doa["speech_detected"])

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
        path = self._socket()
        if path:
            flat = array.array("f", (v for f in frames for v in f))
            with self._lock:
                if self._play is None:
                    self._play = _open_stream(path, "play", b"")
                for start in range(0, len(frames), MAX_PUSH_SAMPLES):
                    piece = flat[start * CHANNELS:(start + MAX_PUSH_SAMPLES) * CHANNELS]
                    try:
                        self._play.sendall(_PLAY_HEADER.pack(b"RBP1", len(piece) // CHANNELS) + piece.tobytes())
                    except OSError as e:
                        self._play.close()
                        self._play = None
                        raise MediaUnavailableError(f"the speaker stream ended: {e}") from e
            return len(frames)
        for start in range(0, len(frames), MAX_PUSH_SAMPLES):
            self._http.request("POST", "/api/audio/push_sample", {"samples": frames[start:start + MAX_PUSH_SAMPLES]})
        return len(frames)

    def play_sound(self, file: Any) -> float:
        """Play a WAV file on the robot (a path there), or a built-in sound by name (wake_up.wav,
        go_sleep.wav); returns its duration in seconds."""
        self._check()
        import os

        return float(self._http.request("POST", "/api/audio/play_sound", {"file": os.fspath(file)})["duration"])


def _frames_of(data: bytes) -> Any:
    """Packed float32 [l, r, ...] as the SDK gives sound: an (n, 2) array, or a list of [l, r]
    lists without numpy; None for no sound."""
    if not data:
        return None
    if "numpy" in sys.modules:
        import numpy

        return numpy.frombuffer(data, dtype="<f4").reshape(-1, CHANNELS).copy()
    flat = array.array("f", data)
    return [[flat[i], flat[i + 1]] for i in range(0, len(flat), 2)]


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
