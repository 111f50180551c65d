"""The robot's camera and microphones over WebRTC, for programs off the robot.

The daemon serves its camera (VP8) and microphones (Opus) to WebRTC peers, signalled by one offer
and one answer through its authenticated API (``POST /api/media/webrtc/offer``, no trickle). This
module is such a peer, built on aiortc (Debian's ``python3-aiortc``, or ``pip install aiortc``):
frames are decoded to BGR and sound to 16 kHz stereo float32, the shapes the robot's own apps get
from the media socket. aiortc runs on an asyncio loop in a thread of its own, so the SDK's calls
stay blocking as the public SDK's are.
"""

import asyncio
import collections
import threading
import time
from typing import Any, Deque, Optional

from ..errors import RobotError

# The sound kept while recording and not read, in frames: as on the media socket, 30 seconds.
_KEPT_SECONDS = 30


class WebRTCUnavailableError(RobotError):
    """aiortc is not installed, or the daemon's WebRTC could not be reached."""


def available() -> bool:
    """Whether aiortc (and PyAV, which it decodes with) can be imported."""
    try:
        import aiortc  # noqa: F401
        import av  # noqa: F401
    except ImportError:
        return False
    return True


class WebRTCStream:
    """One WebRTC connection to the daemon: the newest camera frame, and the sound heard while
    recording. ``http`` is the SDK's client (its token signs the offer)."""

    def __init__(self, http: Any, sample_rate: int, channels: int, timeout: float = 15.0) -> None:
        try:
            import aiortc  # noqa: F401
            import av  # noqa: F401
        except ImportError as e:
            raise WebRTCUnavailableError(
                f"frames and sound from a robot on another machine come over WebRTC, which needs aiortc ({e}): "
                "apt install python3-aiortc, or pip install aiortc") from e
        self._rate, self._channels = sample_rate, channels
        self._cond = threading.Condition()
        self._latest: Optional[tuple] = None  # (width, height, bgr bytes, seq, received ns)
        self._seq = 0
        self.error: Optional[BaseException] = None
        self._recording = False
        self._chunks: Deque[bytes] = collections.deque()
        self._frames = 0
        self._sent: set = set()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="robot_sdk-webrtc")
        self._thread.start()
        self._pc: Any = None
        try:
            # The offer is signed and posted from the caller's thread, with its connection.
            offer = asyncio.run_coroutine_threadsafe(self._offer(), self._loop).result(timeout)
            answer = http.request("POST", "/api/media/webrtc/offer", offer)
            asyncio.run_coroutine_threadsafe(self._answer(answer), self._loop).result(timeout)
        except BaseException as e:
            self.close()
            if isinstance(e, RobotError):
                raise
            raise WebRTCUnavailableError(f"connecting to the robot's WebRTC: {e or type(e).__name__}") from e

    async def _offer(self) -> dict:
        from aiortc import RTCPeerConnection

        pc = RTCPeerConnection()
        self._pc = pc
        pc.addTransceiver("video", direction="recvonly")
        pc.addTransceiver("audio", direction="recvonly")

        @pc.on("track")
        def on_track(track: Any) -> None:
            consume = self._video if track.kind == "video" else self._audio
            self._loop.create_task(self._run(track.kind, consume(track)))

        await pc.setLocalDescription(await pc.createOffer())  # gathers every candidate: no trickle
        return {"type": "offer", "sdp": pc.localDescription.sdp}

    async def _answer(self, answer: dict) -> None:
        from aiortc import RTCSessionDescription

        await self._pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"], type=answer["type"]))
        # A robot without a camera (or microphones) answers that kind "inactive".
        self._sent = {t.kind for t in self._pc.getTransceivers() if t.currentDirection in ("recvonly", "sendrecv")}

    async def _run(self, kind: str, consume: Any) -> None:
        try:
            await consume
        except BaseException as e:  # the connection ended: the next call says why
            with self._cond:
                if self.error is None:
                    self.error = RobotError(f"the robot's {kind} stream over WebRTC ended: {e or type(e).__name__}")
                self._cond.notify_all()

    async def _video(self, track: Any) -> None:
        while True:
            frame = await track.recv()
            bgr = frame.to_ndarray(format="bgr24")
            with self._cond:
                self._seq += 1
                self._latest = (bgr.shape[1], bgr.shape[0], bgr.tobytes(), self._seq, time.monotonic_ns())
                self._cond.notify_all()

    async def _audio(self, track: Any) -> None:
        import av

        resampler = av.AudioResampler(format="flt", layout="stereo" if self._channels == 2 else "mono", rate=self._rate)
        kept = _KEPT_SECONDS * self._rate * self._channels * 4
        while True:
            frame = await track.recv()
            out = resampler.resample(frame)
            for f in out if isinstance(out, list) else [out]:
                data = f.to_ndarray().tobytes()  # packed float32: [l, r, l, r, ...]
                with self._cond:
                    if not self._recording:
                        continue
                    self._chunks.append(data)
                    self._frames += len(data)
                    while self._frames > kept:
                        self._frames -= len(self._chunks.popleft())

    def sends(self, kind: str) -> bool:
        """Whether the robot sends this kind of track ("video", "audio")."""
        return kind in self._sent

    def frame(self, after_seq: int, timeout: float) -> tuple:
        """The newest frame after ``after_seq``: (width, height, bgr bytes, seq, received ns)."""
        if not self.sends("video"):
            raise WebRTCUnavailableError("the robot sends no camera over WebRTC")
        with self._cond:
            self._cond.wait_for(lambda: self.error is not None or (self._latest is not None and self._latest[3] > after_seq), timeout)
            if self._latest is None or self._latest[3] <= after_seq:
                if self.error is not None:
                    raise self.error
                raise WebRTCUnavailableError(f"no camera frame over WebRTC within {timeout:g} s")
            return self._latest

    def record(self, on: bool) -> None:
        """Start (dropping what was heard before) or stop keeping the microphones' sound."""
        with self._cond:
            self._recording = on
            self._chunks.clear()
            self._frames = 0

    def take(self, max_frames: Optional[int]) -> bytes:
        """What was heard since the last take, at most ``max_frames`` frames, as packed float32."""
        width = self._channels * 4
        with self._cond:
            if self.error is not None and not self._chunks:
                raise self.error
            data = b"".join(self._chunks)
            self._chunks.clear()
            if max_frames is not None and len(data) > max_frames * width:
                self._chunks.append(data[max_frames * width:])
                data = data[:max_frames * width]
            self._frames = sum(len(c) for c in self._chunks)
            return data

    def close(self) -> None:
        """Hang up and stop the loop's thread."""
        if self._loop.is_closed():
            return
        if self._pc is not None:
            try:
                asyncio.run_coroutine_threadsafe(self._pc.close(), self._loop).result(5)
            except Exception:  # the connection is going anyway
                pass
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self._loop.close()
