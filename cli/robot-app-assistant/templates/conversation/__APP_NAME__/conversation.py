"""The conversation: what was said, the model's answers and tool calls, the robot's voice and ears."""

import json
import sys
import threading
import time
from typing import Any, Dict, List, Optional

from robot_sdk import SAMPLE_RATE, Robot

from . import audio
from .config import ConfigStore
from .llm import ChatClient, LLMError
from .motion import MovementManager
from .tools import TOOLS, Toolbox

MAX_HISTORY = 20  # messages kept besides the system prompt
MAX_TOOL_ROUNDS = 5  # model calls per turn, so that a model that keeps calling tools still ends


class NotConfigured(Exception):
    """The chat API's address or model is missing."""


class Voice:
    """Says text through the robot's speaker with a wobble, and mutes the ears meanwhile."""

    def __init__(self, robot: Robot, motion: MovementManager) -> None:
        self.robot = robot
        self.motion = motion
        self._muted_until = 0.0
        self._lock = threading.Lock()

    def say(self, client: ChatClient, text: str) -> float:
        """Speak text; returns how long it lasts. Raises LLMError when speech fails."""
        samples = audio.from_wav(client.speech(text))
        self.robot.push_audio_sample(samples)
        seconds = len(samples) / SAMPLE_RATE
        self.played(seconds, audio.envelope(samples))
        return seconds

    def played(self, seconds: float, envelope: List[float]) -> None:
        """A sound of this length started: wobble with it and do not listen to it."""
        self.motion.speak(envelope)
        with self._lock:
            self._muted_until = max(self._muted_until, time.monotonic() + seconds + 0.4)

    def muted(self) -> bool:
        with self._lock:
            return time.monotonic() < self._muted_until


class Conversation:
    """One conversation with the model; turns run one at a time, typed or heard."""

    def __init__(self, store: ConfigStore, toolbox: Toolbox, voice: Voice) -> None:
        self.store = store
        self.toolbox = toolbox
        self.voice = voice
        self.history: List[Dict[str, Any]] = []
        self._turn = threading.Lock()
        self._status_lock = threading.Lock()
        self.status: Dict[str, Any] = {"state": "idle", "heard": "", "reply": "", "tools": [], "error": None, "turns": 0}

    def set_status(self, **values: Any) -> None:
        with self._status_lock:
            self.status.update(values)

    def get_status(self) -> Dict[str, Any]:
        with self._status_lock:
            status = dict(self.status)
        # False while the robot speaks and a moment after: the ears are muted so it does not hear itself.
        status["listening"] = not self.voice.muted()
        return status

    def client(self) -> ChatClient:
        cfg = self.store.get()
        if not cfg.base_url or not cfg.model:
            raise NotConfigured("set the chat API's base URL and model on the app's page first")
        return ChatClient(cfg)

    def turn(self, text: str) -> Dict[str, Any]:
        """Answer what the user said: model calls, tool calls, then the spoken answer."""
        client = self.client()
        cfg = client.config
        with self._turn:
            self.set_status(state="thinking", heard=text, error=None)
            messages = [{"role": "system", "content": cfg.system_prompt}] + self.history + [{"role": "user", "content": text}]
            ran: List[Dict[str, Any]] = []
            reply = ""
            try:
                for _ in range(MAX_TOOL_ROUNDS):
                    message = client.chat(messages, TOOLS)
                    calls = message.get("tool_calls") or []
                    said = {"role": "assistant", "content": message.get("content")}
                    if calls:
                        said["tool_calls"] = calls
                    messages.append(said)
                    if not calls:
                        reply = (message.get("content") or "").strip()
                        break
                    for call in calls:
                        fn = call.get("function") or {}
                        result = self.toolbox.call(str(fn.get("name", "")), str(fn.get("arguments") or "{}"))
                        ran.append({"name": fn.get("name"), "arguments": fn.get("arguments"), "result": result})
                        messages.append({"role": "tool", "tool_call_id": call.get("id", ""), "content": json.dumps(result)})
            except LLMError as e:
                self.set_status(state="idle", error=str(e))
                raise
            self.history = self._trim(messages[1:])
            self.set_status(reply=reply, tools=ran, turns=self.get_status()["turns"] + 1)
            if reply and cfg.speak:
                self.set_status(state="speaking")
                try:
                    self.voice.say(client, reply)
                except (LLMError, ValueError, OSError) as e:  # the answer stands without a voice
                    self.set_status(error=f"speech: {e}")
                    print(f"speech failed: {e}", file=sys.stderr, flush=True)
            self.set_status(state="idle")
            return {"heard": text, "reply": reply, "tools": ran, "turns": self.get_status()["turns"]}

    @staticmethod
    def _trim(messages: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
        """The last messages, starting at a user message so that no tool result loses its call."""
        if len(messages) <= MAX_HISTORY:
            return messages
        kept = messages[-MAX_HISTORY:]
        while kept and kept[0].get("role") != "user":
            kept = kept[1:]
        return kept


class Listener:
    """The audio pipeline in: microphone samples, speech detection, transcription, a turn."""

    def __init__(self, robot: Robot, conversation: Conversation, voice: Voice) -> None:
        self.robot = robot
        self.conversation = conversation
        self.voice = voice
        self.detector = audio.SpeechDetector()
        self.recording = False

    def run(self, stop_event: threading.Event) -> None:
        try:
            while not stop_event.is_set():
                try:
                    self._step()
                except Exception as e:  # keep listening: the next utterance may work
                    self.conversation.set_status(error=f"listening: {type(e).__name__}: {e}")
                    print(f"listening failed: {e}", file=sys.stderr, flush=True)
                    stop_event.wait(1.0)
                stop_event.wait(0.05)
        finally:
            if self.recording:
                try:
                    self.robot.media.stop_recording()
                except Exception:
                    pass

    def _step(self) -> None:
        cfg = self.conversation.store.get()
        if not cfg.listen:
            if self.recording:
                self.robot.media.stop_recording()
                self.recording = False
            return
        if not self.recording:
            self.robot.media.start_recording()
            self.recording = True
            self.detector.reset()
        # None when nothing new was heard; an (n, 2) numpy array when the app has numpy loaded
        # (the SDK's poses do), whose truth value is ambiguous: test for None, never with `or`.
        heard = self.robot.media.get_audio_sample()
        samples = audio.to_mono(heard if heard is not None else [])
        if self.voice.muted():  # the microphone hears the robot itself
            self.detector.reset()
            return
        utterance = self.detector.feed(samples)
        if utterance is None:
            return
        try:
            client = self.conversation.client()
        except NotConfigured as e:
            self.conversation.set_status(error=f"heard speech, but {e}")
            return
        self.conversation.set_status(state="transcribing")
        text = client.transcribe(audio.to_wav(utterance))
        if not text:
            self.conversation.set_status(state="idle")
            return
        try:
            self.conversation.turn(text)
        except LLMError:
            pass  # already in the status
