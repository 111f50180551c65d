"""Settings of the app: the chat API's address, model and key, the voice, the prompt.

They come from, in order (later wins): the defaults below, the environment (OPENAI_BASE_URL,
OPENAI_API_KEY, OPENAI_MODEL, which apps inherit from the robot daemon), and the config file,
which the app's web page writes. The file is ``$__APP_NAME_UPPER___CONFIG`` if set, else
``$XDG_CONFIG_HOME/__APP_NAME__/config.json`` (default ``~/.config/__APP_NAME__/config.json``).
"""

import json
import os
import threading
import urllib.parse
from dataclasses import asdict, dataclass, fields
from pathlib import Path

APP_NAME = "__APP_NAME__"

DEFAULT_PROMPT = (
    "You are a small, friendly, expressive robot with a head that turns and tilts and two antennas. "
    "Your answers are spoken aloud: keep them short, one or two sentences, without lists or markdown. "
    "Use your tools to move your head and antennas and to play sounds whenever it fits what you say."
)


@dataclass
class Config:
    """What the app needs to talk."""

    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o-mini"
    api_key: str = ""
    system_prompt: str = DEFAULT_PROMPT
    transcription_model: str = "whisper-1"
    speech_model: str = "tts-1"
    voice: str = "alloy"
    listen: bool = True  # turn what the microphone hears into messages
    speak: bool = True  # say the answers aloud

    def public(self) -> dict:
        """The settings without the key, for the web page."""
        d = asdict(self)
        d.pop("api_key")
        d["has_api_key"] = bool(self.api_key)
        return d


def config_path() -> Path:
    """Where the config file lives."""
    explicit = os.environ.get(APP_NAME.upper() + "_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / APP_NAME / "config.json"


def check(values: dict) -> dict:
    """Validate settings from the web page or the file; returns them typed, raises ValueError naming the field."""
    known = {f.name: f for f in fields(Config)}
    out = {}
    for key, value in values.items():
        if key not in known:
            raise ValueError(f"{key}: not a setting (known: {', '.join(sorted(known))})")
        if known[key].type in (bool, "bool"):
            if not isinstance(value, bool):
                raise ValueError(f"{key}: true or false")
        elif not isinstance(value, str):
            raise ValueError(f"{key}: must be text")
        elif key == "base_url":
            value = value.strip().rstrip("/")
            parsed = urllib.parse.urlsplit(value)
            if parsed.scheme not in ("http", "https") or not parsed.netloc:
                raise ValueError("base_url: an http(s) URL such as https://api.openai.com/v1")
        elif key in ("model", "transcription_model", "speech_model", "voice"):
            value = value.strip()
            if not value:
                raise ValueError(f"{key}: must not be empty")
        out[key] = value
    return out


class ConfigStore:
    """The current settings, shared by the threads of the app, saved to the config file on change."""

    def __init__(self, path: Path = None) -> None:
        self.path = path or config_path()
        self._lock = threading.Lock()
        self._config = Config()
        env = {"base_url": os.environ.get("OPENAI_BASE_URL"), "api_key": os.environ.get("OPENAI_API_KEY"),
               "model": os.environ.get("OPENAI_MODEL")}
        self._apply({k: v for k, v in env.items() if v})
        if self.path.exists():
            try:
                data = json.loads(self.path.read_text(encoding="utf-8"))
                if not isinstance(data, dict):
                    raise ValueError("the file must hold a JSON object")
                self._apply(check(data))
            except (OSError, ValueError) as e:
                raise ValueError(f"config file {self.path}: {e}") from e

    def _apply(self, values: dict) -> None:
        for key, value in values.items():
            setattr(self._config, key, value)

    def get(self) -> Config:
        """A copy of the current settings."""
        with self._lock:
            return Config(**asdict(self._config))

    def update(self, values: dict) -> Config:
        """Validate, apply and save settings; an empty api_key keeps the saved key."""
        values = dict(values)
        if values.get("api_key") == "":
            values.pop("api_key")
        checked = check(values)
        with self._lock:
            self._apply(checked)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            # The file holds the API key: readable by its owner only.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(asdict(self._config), f, indent=2)
            os.replace(tmp, self.path)
            return Config(**asdict(self._config))
