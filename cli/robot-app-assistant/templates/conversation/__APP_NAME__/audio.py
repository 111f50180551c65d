"""Sound in and out: WAV files, resampling to the robot's rate, speech detection, loudness."""

import io
import math
import struct
import wave
from typing import List, Optional, Sequence

from robot_sdk import SAMPLE_RATE

FRAME = SAMPLE_RATE // 50  # 20 ms


def to_mono(frames: Sequence) -> List[float]:
    """The microphones' [left, right] frames (a numpy (n, 2) array or lists) as mono samples."""
    if hasattr(frames, "tolist"):
        frames = frames.tolist()
    return [(float(f[0]) + float(f[1])) / 2 if isinstance(f, (list, tuple)) else float(f) for f in frames]


def to_wav(samples: List[float], rate: int = SAMPLE_RATE) -> bytes:
    """Mono float samples in [-1, 1] as a 16-bit PCM WAV file."""
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"".join(struct.pack("<h", int(max(-1.0, min(1.0, s)) * 32767)) for s in samples))
    return buf.getvalue()


def from_wav(data: bytes) -> List[float]:
    """A PCM WAV file (any rate, channels and 8-32 bit width) as mono floats at SAMPLE_RATE.

    Some servers stream WAV with unknown lengths in the header: the frames are read as far as
    the data goes.
    """
    try:
        with wave.open(io.BytesIO(data), "rb") as w:
            channels, width, rate = w.getnchannels(), w.getsampwidth(), w.getframerate()
            raw = w.readframes(w.getnframes() if w.getnframes() < 2**31 - 1 else 2**31 - 1)
    except (wave.Error, EOFError, struct.error) as e:
        raise ValueError(f"not a PCM WAV file: {e}") from None
    if width == 1:
        values = [(b - 128) / 128 for b in raw]
    elif width == 2:
        values = [v / 32768 for v in struct.unpack(f"<{len(raw) // 2}h", raw[: len(raw) // 2 * 2])]
    elif width == 3:
        values = [int.from_bytes(raw[i:i + 3], "little", signed=True) / 8388608 for i in range(0, len(raw) - 2, 3)]
    elif width == 4:
        values = [v / 2147483648 for v in struct.unpack(f"<{len(raw) // 4}i", raw[: len(raw) // 4 * 4])]
    else:
        raise ValueError(f"unsupported sample width {width}")
    mono = [sum(values[i:i + channels]) / channels for i in range(0, len(values) - channels + 1, channels)]
    return resample(mono, rate)


def resample(samples: List[float], rate: int, target: int = SAMPLE_RATE) -> List[float]:
    """Linear-interpolation resampling."""
    if rate == target or not samples:
        return list(samples)
    n = int(len(samples) * target / rate)
    step = rate / target
    out = []
    for i in range(n):
        pos = i * step
        j = int(pos)
        frac = pos - j
        a = samples[j]
        b = samples[j + 1] if j + 1 < len(samples) else a
        out.append(a + (b - a) * frac)
    return out


def rms(samples: List[float]) -> float:
    return math.sqrt(sum(s * s for s in samples) / len(samples)) if samples else 0.0


def envelope(samples: List[float], frame: int = FRAME) -> List[float]:
    """Loudness per 20 ms frame, scaled to [0, 1] by the loudest frame."""
    levels = [rms(samples[i:i + frame]) for i in range(0, len(samples), frame)]
    top = max(levels, default=0.0)
    return [lvl / top for lvl in levels] if top > 0 else levels


class SpeechDetector:
    """Finds utterances in a stream of microphone samples by loudness.

    A frame is loud when its RMS is above max(min_level, 3 x the noise floor). An utterance starts
    after 3 loud frames (with 200 ms before them kept), and ends after ``silence`` seconds of quiet;
    shorter than ``min_speech`` it is dropped, longer than ``max_speech`` it is cut.
    """

    def __init__(self, min_level: float = 0.01, silence: float = 0.6, min_speech: float = 0.3,
                 max_speech: float = 15.0) -> None:
        self.min_level = min_level
        self.silence_frames = int(silence * 50)
        self.min_frames = int(min_speech * 50)
        self.max_frames = int(max_speech * 50)
        self.noise = 0.0
        self.reset()

    def reset(self) -> None:
        """Forget what was heard (while the robot speaks, the microphone hears the robot)."""
        self._pending: List[float] = []
        self._pre: List[List[float]] = []
        self._speech: List[List[float]] = []
        self._loud_run = 0
        self._quiet_run = 0

    def feed(self, samples: List[float]) -> Optional[List[float]]:
        """Add samples; returns an utterance once one ends."""
        self._pending.extend(samples)
        done = None
        while len(self._pending) >= FRAME:
            frame, self._pending = self._pending[:FRAME], self._pending[FRAME:]
            result = self._frame(frame)
            if result is not None:
                done = result
        return done

    def _frame(self, frame: List[float]) -> Optional[List[float]]:
        level = rms(frame)
        loud = level > max(self.min_level, 3 * self.noise)
        if not self._speech:
            if not loud:
                self.noise = 0.95 * self.noise + 0.05 * level
                self._loud_run = 0
                self._pre = (self._pre + [frame])[-10:]
                return None
            self._loud_run += 1
            self._pre.append(frame)
            if self._loud_run >= 3:
                self._speech, self._pre = self._pre[-13:], []
                self._quiet_run = 0
            return None
        self._speech.append(frame)
        self._quiet_run = 0 if loud else self._quiet_run + 1
        if self._quiet_run >= self.silence_frames or len(self._speech) >= self.max_frames:
            frames, self._speech = self._speech, []
            self._loud_run = 0
            if len(frames) - self._quiet_run < self.min_frames:
                return None
            return [s for f in frames[: len(frames) - self._quiet_run + 5] for s in f]
        return None


def tone(freqs: List[float], seconds: float, amplitude: float = 0.4) -> List[float]:
    """Notes played one after the other, each with a short fade, at SAMPLE_RATE."""
    out: List[float] = []
    per = int(seconds * SAMPLE_RATE / len(freqs))
    fade = min(per // 4, SAMPLE_RATE // 100)
    for f in freqs:
        for i in range(per):
            gain = min(1.0, i / fade if fade else 1.0, (per - i) / fade if fade else 1.0)
            out.append(amplitude * gain * math.sin(2 * math.pi * f * i / SAMPLE_RATE))
    return out
