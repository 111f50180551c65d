"""Writes this test move library: our own moves in the public robot's recording format.

    python3 generate.py     # from this folder; rewrites the .json and .wav files

Each move is a function of time giving the head (x, y, z in metres; roll, pitch, yaw in radians),
the antennas [right, left] and the body yaw; frames are sampled at about 50 Hz with a small, fixed
jitter in their timestamps, as a recording's are. Standard library only.
"""

import json
import math
import struct
import wave

RATE = 50.0


def matrix(x, y, z, roll, pitch, yaw):
    """The 4x4 pose: R = Rz(yaw) Ry(pitch) Rx(roll), the translation in the last column."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr, x],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr, y],
        [-sp, cp * sr, cp * cr, z],
        [0.0, 0.0, 0.0, 1.0],
    ]


def record(description, duration, at):
    times, frames = [], []
    n = int(duration * RATE)
    for i in range(n + 1):
        jitter = 0.0015 * math.sin(i * 1.7) if 0 < i < n else 0.0  # a recorder's uneven ticks
        t = round(i / RATE + jitter, 6)
        (x, y, z, roll, pitch, yaw), antennas, body_yaw = at(t)
        times.append(t)
        frames.append({
            "head": [[round(v, 9) for v in row] for row in matrix(x, y, z, roll, pitch, yaw)],
            "antennas": [round(a, 9) for a in antennas],
            "body_yaw": round(body_yaw, 9),
            "check_collision": False,
        })
    return {"description": description, "time": times, "set_target_data": frames}


def deg(v):
    return math.radians(v)


MOVES = {
    # Nods twice: the head pitches down 15 degrees and back, once a second.
    "nod": record("Nods twice, yes yes.", 2.0, lambda t: (
        (0, 0, 0, 0, deg(15) * math.sin(math.pi * t) ** 2, 0), [deg(-10), deg(10)], 0.0)),
    # Looks left then right: the head's yaw swings 30 degrees each way over 3 s.
    "look_around": record("Looks to its left, then to its right.", 3.0, lambda t: (
        (0, 0, 0.005, 0, 0, deg(30) * math.sin(2 * math.pi * t / 3)), [deg(-10), deg(10)], 0.0)),
    # Waves its antennas in opposition, the head still.
    "antenna_wave": record("Waves its antennas, happy.", 2.0, lambda t: (
        (0, 0, 0, 0, 0, 0), [deg(40) * math.sin(2 * math.pi * t), -deg(40) * math.sin(2 * math.pi * t)], 0.0)),
    # A steady ramp of every part: each sample's time can be read back from where the robot is,
    # which the playback timing benchmark uses.
    "ramp": record("Turns slowly left, raising its antennas (a ramp for measurements).", 4.0, lambda t: (
        (0, 0, 0, 0, 0, deg(10) * t), [deg(-40 + 20 * t), deg(40 - 20 * t)], deg(5) * t)),
}


def tone(path, seconds=0.4, freq=660.0, rate=16000):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"".join(
            struct.pack("<h", int(8000 * math.sin(2 * math.pi * freq * i / rate) * (1 - i / (seconds * rate))))
            for i in range(int(seconds * rate))))


if __name__ == "__main__":
    for name, move in MOVES.items():
        with open(f"{name}.json", "w") as f:
            json.dump(move, f, separators=(",", ":"))
            f.write("\n")
    tone("nod.wav")
