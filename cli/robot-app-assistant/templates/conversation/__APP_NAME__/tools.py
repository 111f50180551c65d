"""The tools the model can call: move the head, move the antennas, play a sound."""

import json
import math
import os
import tempfile
from typing import Any, Callable, Dict, List

from robot_sdk import Robot

from . import audio
from .motion import MovementManager

# Sounds the robot can play, made at start-up as WAV files on the robot.
SOUNDS = {
    "beep": ([880.0], 0.15),
    "chime": ([523.3, 659.3, 784.0, 1046.5], 0.6),
    "boop": ([440.0, 330.0, 220.0], 0.45),
}

TOOLS: List[Dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "move_head",
        "description": "Turn and tilt the robot's head. Angles in degrees; 0 everywhere looks straight ahead.",
        "parameters": {"type": "object", "properties": {
            "yaw_deg": {"type": "number", "description": "left (positive) or right (negative), -60 to 60"},
            "pitch_deg": {"type": "number", "description": "down (positive) or up (negative), -30 to 30"},
            "roll_deg": {"type": "number", "description": "tilt sideways, -25 to 25"},
            "duration": {"type": "number", "description": "seconds the move takes, 0.2 to 5"},
        }},
    }},
    {"type": "function", "function": {
        "name": "move_antennas",
        "description": "Move the two antennas. Angles in degrees, -80 to 80; 0 is upright.",
        "parameters": {"type": "object", "properties": {
            "left_deg": {"type": "number"},
            "right_deg": {"type": "number"},
            "duration": {"type": "number", "description": "seconds the move takes, 0.2 to 5"},
        }, "required": ["left_deg", "right_deg"]},
    }},
    {"type": "function", "function": {
        "name": "play_sound",
        "description": "Play a short sound effect.",
        "parameters": {"type": "object", "properties": {
            "name": {"type": "string", "enum": sorted(SOUNDS)},
        }, "required": ["name"]},
    }},
]


class ToolError(Exception):
    """A tool call the robot cannot do; its message goes back to the model."""


def _number(args: Dict[str, Any], key: str, default: float, lo: float, hi: float) -> float:
    value = args.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ToolError(f"{key} must be a number")
    return max(lo, min(hi, float(value)))


class Toolbox:
    """Runs tool calls on the robot."""

    def __init__(self, robot: Robot, motion: MovementManager, on_sound: Callable[[float, List[float]], None]) -> None:
        self.robot = robot
        self.motion = motion
        self.on_sound = on_sound  # told (duration, envelope) when a sound starts
        self.sound_dir = tempfile.mkdtemp(prefix="__APP_NAME__-sounds-")
        self.sounds: Dict[str, str] = {}
        self.sound_samples: Dict[str, List[float]] = {}
        for name, (freqs, seconds) in SOUNDS.items():
            samples = audio.tone(freqs, seconds)
            path = os.path.join(self.sound_dir, name + ".wav")
            with open(path, "wb") as f:
                f.write(audio.to_wav(samples))
            self.sounds[name], self.sound_samples[name] = path, samples

    def close(self) -> None:
        for path in self.sounds.values():
            try:
                os.remove(path)
            except OSError:
                pass
        try:
            os.rmdir(self.sound_dir)
        except OSError:
            pass

    def call(self, name: str, arguments: str) -> Dict[str, Any]:
        """Run one tool call (arguments as the model sent them, JSON text); returns its result."""
        try:
            args = json.loads(arguments or "{}")
            if not isinstance(args, dict):
                raise ToolError("arguments must be a JSON object")
            if name == "move_head":
                duration = _number(args, "duration", 0.8, 0.2, 5.0)
                pose = self.motion.goto(duration,
                                        yaw=math.radians(_number(args, "yaw_deg", 0, -60, 60)),
                                        pitch=math.radians(_number(args, "pitch_deg", 0, -30, 30)),
                                        roll=math.radians(_number(args, "roll_deg", 0, -25, 25)))
                return {"status": "moving", "yaw_deg": round(math.degrees(pose.yaw), 1),
                        "pitch_deg": round(math.degrees(pose.pitch), 1), "roll_deg": round(math.degrees(pose.roll), 1)}
            if name == "move_antennas":
                if "left_deg" not in args or "right_deg" not in args:
                    raise ToolError("left_deg and right_deg are required")
                duration = _number(args, "duration", 0.5, 0.2, 5.0)
                pose = self.motion.goto(duration, left=math.radians(_number(args, "left_deg", 0, -80, 80)),
                                        right=math.radians(_number(args, "right_deg", 0, -80, 80)))
                return {"status": "moving", "left_deg": round(math.degrees(pose.left), 1),
                        "right_deg": round(math.degrees(pose.right), 1)}
            if name == "play_sound":
                sound = args.get("name")
                if sound not in self.sounds:
                    raise ToolError(f"name must be one of {', '.join(sorted(self.sounds))}")
                duration = self.robot.play_sound(self.sounds[sound])
                self.on_sound(duration, audio.envelope(self.sound_samples[sound]))
                return {"status": "playing", "sound": sound, "seconds": round(duration, 2)}
            raise ToolError(f"no tool named {name}")
        except ToolError as e:
            return {"status": "error", "error": str(e)}
        except ValueError as e:
            return {"status": "error", "error": f"arguments are not valid JSON: {e}"}
        except Exception as e:  # the robot refused: the model hears why
            return {"status": "error", "error": f"{type(e).__name__}: {e}"}
