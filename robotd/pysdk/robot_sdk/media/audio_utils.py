"""robot_sdk.media.audio_utils: helpers for sound on and off the robot, as the public SDK's module
offers them: find the robot's sound card, and write what the microphones heard to a WAV file.

Standard library only: WAV files are written with ``wave`` (16-bit PCM), and the sound card is
found in /proc/asound by its USB id, with no ``arecord`` to run."""

import glob
import os
import wave
from typing import Any, Iterable, List, Sequence

# The robot's sound card by USB id: its own firmware, then the ReSpeaker firmware of early units.
AUDIO_USB_IDS = ("38fb:1001", "2886:001a")


def get_respeaker_card_number(asound: str = "/proc/asound") -> int:
    """The ALSA card number of the robot's sound card; 0 (the default card) when it is not there,
    -1 when this system has no ALSA."""
    if not os.path.isdir(asound):
        return -1
    for path in sorted(glob.glob(os.path.join(asound, "card[0-9]*", "usbid"))):
        try:
            with open(path) as f:
                usbid = f.read().strip().lower()
        except OSError:
            continue
        if usbid in AUDIO_USB_IDS:
            return int(os.path.basename(os.path.dirname(path))[4:])
    return 0


def _frames(audio_data: Any) -> List[Sequence[float]]:
    if hasattr(audio_data, "tolist"):
        audio_data = audio_data.tolist()
    return [f if isinstance(f, (list, tuple)) else (f,) for f in audio_data]


def save_audio_to_wav(audio_data: Any, samplerate: int, filepath: str) -> None:
    """Write float audio in [-1, 1] to a 16-bit PCM WAV file: shape (n,) for mono or (n, c) for
    c channels (what ``get_audio_sample`` returns is (n, 2)). Values outside [-1, 1] are clipped."""
    if int(samplerate) <= 0:
        raise ValueError("samplerate must be a positive number of frames per second")
    frames = _frames(audio_data)
    channels = len(frames[0]) if frames else 1
    data = bytearray()
    for i, f in enumerate(frames):
        if len(f) != channels:
            raise ValueError(f"frame {i} has {len(f)} channels, the first has {channels}")
        for v in f:
            v = max(-1.0, min(1.0, float(v)))
            data += int(round(v * 32767)).to_bytes(2, "little", signed=True)
    with wave.open(os.fspath(filepath), "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(2)
        w.setframerate(int(samplerate))
        w.writeframes(bytes(data))


def load_wav(filepath: str) -> "tuple[List[List[float]], int]":
    """Read a 16-bit PCM WAV file: its frames as [channel values] in [-1, 1], and its rate."""
    with wave.open(os.fspath(filepath), "rb") as w:
        if w.getsampwidth() != 2:
            raise ValueError(f"{filepath}: {8 * w.getsampwidth()}-bit samples; this reads 16-bit PCM")
        channels, rate, raw = w.getnchannels(), w.getframerate(), w.readframes(w.getnframes())
    values: Iterable[int] = (int.from_bytes(raw[i:i + 2], "little", signed=True) for i in range(0, len(raw), 2))
    flat = [v / 32768 for v in values]
    return [flat[i:i + channels] for i in range(0, len(flat), channels)], rate
