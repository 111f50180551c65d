"""A client of an OpenAI-compatible API: chat completions with tools, transcription, speech.

Standard library only. Errors are LLMError, whose message never holds the API key.
"""

import json
import secrets
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional

from .config import Config


class LLMError(Exception):
    """The API could not be reached or answered with an error."""


class ChatClient:
    """Calls ``<base_url>/chat/completions``, ``/audio/transcriptions`` and ``/audio/speech``."""

    def __init__(self, config: Config, timeout: float = 60.0) -> None:
        self.base_url = config.base_url.rstrip("/")
        self.config = config
        self.timeout = timeout

    def _request(self, path: str, data: bytes, content_type: str) -> bytes:
        url = self.base_url + path
        headers = {"Content-Type": content_type, "User-Agent": "__APP_NAME__"}
        if self.config.api_key:
            headers["Authorization"] = "Bearer " + self.config.api_key
        req = urllib.request.Request(url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return resp.read()
        except urllib.error.HTTPError as e:
            body = e.read()[:2000].decode("utf-8", "replace")
            message = body
            try:
                err = json.loads(body).get("error")
                message = err.get("message", body) if isinstance(err, dict) else str(err or body)
            except (ValueError, AttributeError):
                pass
            raise LLMError(f"{path}: {e.code} {message}".replace(self.config.api_key or "\0", "<key>")) from None
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            raise LLMError(f"cannot reach {self.base_url}: {reason}") from None

    def chat(self, messages: List[Dict[str, Any]], tools: Optional[List[Dict[str, Any]]] = None) -> Dict[str, Any]:
        """One chat completion; returns the assistant's message (content and tool_calls)."""
        body: Dict[str, Any] = {"model": self.config.model, "messages": messages}
        if tools:
            body["tools"] = tools
            body["tool_choice"] = "auto"
        raw = self._request("/chat/completions", json.dumps(body).encode(), "application/json")
        try:
            message = json.loads(raw)["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise LLMError(f"/chat/completions: unexpected answer {raw[:200]!r}") from None
        if not isinstance(message, dict):
            raise LLMError("/chat/completions: the message is not an object")
        return message

    def transcribe(self, wav: bytes) -> str:
        """The text spoken in a WAV file."""
        boundary = "----robotapp" + secrets.token_hex(8)
        parts = []
        for name, value in (("model", self.config.transcription_model), ("response_format", "json")):
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="speech.wav"\r\n'
                     "Content-Type: audio/wav\r\n\r\n".encode() + wav + b"\r\n")
        parts.append(f"--{boundary}--\r\n".encode())
        raw = self._request("/audio/transcriptions", b"".join(parts), "multipart/form-data; boundary=" + boundary)
        try:
            return str(json.loads(raw)["text"]).strip()
        except (ValueError, KeyError, TypeError):
            raise LLMError(f"/audio/transcriptions: unexpected answer {raw[:200]!r}") from None

    def speech(self, text: str) -> bytes:
        """Text said aloud, as a WAV file."""
        body = {"model": self.config.speech_model, "input": text, "voice": self.config.voice, "response_format": "wav"}
        raw = self._request("/audio/speech", json.dumps(body).encode(), "application/json")
        if not raw.startswith(b"RIFF"):
            raise LLMError("/audio/speech: the answer is not a WAV file")
        return raw
