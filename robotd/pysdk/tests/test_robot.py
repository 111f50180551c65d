"""Robot: connection, state, motion and errors, against a real robot-daemon --sim."""

import math
import os
import signal
import tempfile
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

from robot_sdk import DaemonUnavailableError, RequestRefusedError, Robot, create_head_pose

from .daemon import daemon, free_port


def wait_for(predicate, timeout=3.0, interval=0.02):
    """Poll predicate until it returns a true value or timeout passes; returns its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def stop_process(pid):
    """SIGSTOP pid and wait until every one of its threads has stopped. The kernel stops each thread
    when it next enters or leaves the kernel; on a busy machine a thread may still run, and answer a
    request, for a moment after kill returns."""
    os.kill(pid, signal.SIGSTOP)

    def stopped():
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    # The state follows the command's closing parenthesis: T stopped, t traced.
                    if f.read().rsplit(")", 1)[1].split()[0] not in ("T", "t"):
                        return False
        except (FileNotFoundError, ProcessLookupError):
            return False
        return True

    if not wait_for(stopped, timeout=5.0, interval=0.005):
        raise AssertionError(f"process {pid} did not stop within 5 s of SIGSTOP")


class RobotTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = daemon()

    def setUp(self):
        self.robot = Robot(url=self.daemon.url)
        self.addCleanup(self.robot.close)

    def test_connects_and_reads_state(self):
        state = self.robot.get_state()
        self.assertTrue(state["awake"])
        self.assertEqual(state["backend"], "sim")
        self.assertEqual(len(self.robot.get_present_antenna_joint_positions()), 2)
        self.assertTrue(self.robot.is_awake())
        self.assertEqual(self.robot.daemon_status["state"], "running")
        # The session is listed while it is open; an SDK client holds no app slot.
        status = self.daemon.get("/api/daemon/status")
        self.assertEqual(status["slot"]["state"], "free")
        self.assertIn(self.robot.session_id, [s["id"] for s in status["sessions"]])

    def test_close_ends_the_session(self):
        sid = self.robot.session_id
        self.robot.close()
        sessions = self.daemon.get("/api/daemon/status")["sessions"]
        self.assertNotIn(sid, [s["id"] for s in sessions])
        self.robot.close()  # twice is fine

    def test_set_target_moves_the_antennas(self):
        self.robot.set_target(antennas=[0.6, -0.4])
        state = self.daemon.get("/api/state/full")
        self.assertEqual(state["target_antennas_position"], [0.6, -0.4])
        reached = wait_for(lambda: all(
            abs(a - b) < 0.01 for a, b in zip(self.daemon.get("/api/state/full")["antennas_position"], [0.6, -0.4])))
        self.assertTrue(reached, self.daemon.get("/api/state/full"))

    def test_set_target_head_pose(self):
        self.robot.set_target(head=create_head_pose(pitch=10, degrees=True))
        target = self.daemon.get("/api/state/full")["target_head_pose"]
        self.assertAlmostEqual(target["pitch"], math.radians(10), places=6)
        self.robot.set_target(head={"roll": 0.1})
        self.assertAlmostEqual(self.daemon.get("/api/state/full")["target_head_pose"]["roll"], 0.1, places=6)

    def test_goto_target_waits_for_the_move(self):
        start = time.monotonic()
        uuid = self.robot.goto_target(head=self.robot.create_head_pose(yaw=20, degrees=True),
                                      antennas=[0.3, 0.3], duration=0.3)
        self.assertGreaterEqual(time.monotonic() - start, 0.3)
        self.assertTrue(uuid)
        state = self.daemon.get("/api/state/full")
        self.assertAlmostEqual(state["head_pose"]["yaw"], math.radians(20), places=2)
        pose = self.robot.get_current_head_pose()
        self.assertAlmostEqual(math.atan2(pose[1, 0], pose[0, 0]), math.radians(20), places=2)
        self.assertIsNone(state["move"])

    def test_goto_target_without_waiting(self):
        uuid = self.robot.goto_target(antennas=[-0.2, 0.2], duration=1.0, wait=False)
        move = self.daemon.get("/api/state/full")["move"]
        self.assertEqual(move["uuid"], uuid)
        self.robot.stop_move(uuid)
        self.assertIsNone(self.daemon.get("/api/state/full")["move"])

    def test_bad_arguments_are_refused_before_sending(self):
        with self.assertRaisesRegex(ValueError, "two elements"):
            self.robot.set_target(antennas=[0.1, 0.2, 0.3])
        with self.assertRaisesRegex(ValueError, r"4x4 matrix, got shape \(\)"):
            self.robot.set_target(head=12)

    def test_refusal_carries_the_daemons_detail(self):
        with self.assertRaises(RequestRefusedError) as cm:
            self.robot.set_motor_mode("flying")
        self.assertEqual(cm.exception.status, 422)
        self.assertIn("flying", cm.exception.detail)
        with self.assertRaises(RequestRefusedError) as cm:
            self.robot.goto_target(antennas=[0, 0], duration=120)
        self.assertEqual(cm.exception.status, 422)
        self.assertIn("duration", str(cm.exception))

    def test_goto_sleep_keeps_the_motors_on_and_wake_up_plays_the_public_move(self):
        self.robot.goto_sleep()
        state = self.daemon.get("/api/state/full")
        self.assertFalse(state["awake"])
        self.assertEqual(state["control_mode"], "enabled", "the public SDK's goto_sleep leaves the motors on")
        # An app that sleeps and then moves gets its motion.
        self.robot.goto_target(antennas=[0.4, -0.4], duration=0.3)
        wait_for(lambda: self.daemon.get("/api/state/full")["antennas_position"] == [0.4, -0.4], timeout=2)
        start = time.monotonic()
        self.robot.wake_up()
        took = time.monotonic() - start
        self.assertGreaterEqual(took, 2.5)
        self.assertLess(took, 4.0)
        state = self.daemon.get("/api/state/full")
        self.assertTrue(state["awake"])
        self.assertEqual(state["target_antennas_position"], [-0.1745, 0.1745])
        head, antennas = self.robot.get_current_joint_positions()
        self.assertEqual(len(head), 7)
        self.assertEqual(antennas, [-0.1745, 0.1745])

    def test_motor_modes(self):
        self.robot.disable_motors()
        self.assertEqual(self.daemon.get("/api/motors/status")["mode"], "disabled")
        self.assertFalse(self.robot.is_awake(), "a robot whose motors are off is asleep, not awake and limp")
        self.robot.enable_motors()
        self.assertEqual(self.daemon.get("/api/motors/status")["mode"], "enabled")
        self.robot.wake_up()  # as the other tests of the shared daemon expect it
        self.assertTrue(self.robot.is_awake())


class ConnectionTest(unittest.TestCase):
    def test_daemon_down_raises_daemon_unavailable(self):
        url = f"http://127.0.0.1:{free_port()}"
        with self.assertRaises(DaemonUnavailableError) as cm:
            Robot(url=url)
        self.assertIn(url, str(cm.exception))
        self.assertIn("robot-daemon", str(cm.exception))

    def test_url_from_the_environment(self):
        d = daemon()
        with mock.patch.dict(os.environ, {"ROBOT_DAEMON_URL": d.url}):
            with Robot() as robot:
                self.assertEqual(robot.url, d.url)
                self.assertTrue(robot.get_state()["awake"])
        with mock.patch.dict(os.environ, {"ROBOT_DAEMON_URL": f"http://127.0.0.1:{free_port()}"}):
            with self.assertRaises(DaemonUnavailableError):
                Robot()

    def test_many_clients_connect_at_once(self):
        # The anchor lets many SDK clients connect; the app slot is one app, not one client.
        d = daemon()
        with Robot(url=d.url) as first, Robot(url=d.url) as second:
            first.set_target(antennas=[0.2, -0.2])
            second.set_target(antennas=[0.3, -0.3])
            self.assertEqual(d.get("/api/state/full")["target_antennas_position"], [0.3, -0.3])
            self.assertEqual(len(d.get("/api/daemon/status")["sessions"]), 2)

    def test_a_daemon_stall_is_ridden_out(self):
        # Issue 24: one 5 s stall of the daemon killed an app for good (DaemonUnavailableError
        # while the daemon was running). Requests now wait for it, within the grace period, and
        # the log says what happened.
        d = daemon()
        with Robot(url=d.url, timeout=0.5) as robot:
            self.addCleanup(os.kill, d.proc.pid, signal.SIGCONT)
            stop_process(d.proc.pid)
            resume = threading.Timer(2.0, os.kill, (d.proc.pid, signal.SIGCONT))
            resume.start()
            started = time.monotonic()
            with self.assertLogs("robot_sdk", "WARNING") as logs:
                state = robot.get_state()
            self.assertTrue(state["awake"])
            self.assertGreater(time.monotonic() - started, 1.5)  # it did wait for the stall
            text = "\n".join(logs.output)
            self.assertIn("is not answering", text)
            self.assertIn("answers again after", text)

    def test_no_answer_past_the_grace_says_how_long(self):
        d = daemon()
        with mock.patch.dict(os.environ, {"ROBOT_SDK_RECONNECT_GRACE": "1"}):
            with Robot(url=d.url, timeout=0.3) as robot:
                try:
                    stop_process(d.proc.pid)
                    with self.assertRaisesRegex(DaemonUnavailableError, r"did not answer for \d+\.\d s .*ROBOT_SDK_RECONNECT_GRACE=1 s"):
                        robot.get_state()
                finally:
                    os.kill(d.proc.pid, signal.SIGCONT)

    def test_invalid_url(self):
        with self.assertRaisesRegex(ValueError, "http"):
            Robot(url="ftp://robot")


class CredentialsTest(unittest.TestCase):
    """How a script finds the daemon's token (issue 30): no credential is inferred from the
    connection, so the SDK brings one, as Jupyter's and Docker's clients do."""

    def test_no_credential_is_refused_saying_how(self):
        d = daemon()
        env = {"ROBOT_DAEMON_TOKEN": "", "ROBOT_DAEMON_TOKEN_FILE": "", "ROBOT_DAEMON_SOCKET": ""}
        with mock.patch.dict(os.environ, env):
            with self.assertRaises(RequestRefusedError) as cm:
                Robot(url=d.url)
        self.assertEqual(cm.exception.status, 401)
        self.assertIn("Authorization: Bearer", cm.exception.detail)
        self.assertIn("daemon.sock", cm.exception.detail)

    def test_the_token_from_the_environment_and_from_a_file(self):
        d = daemon()
        for env in ({"ROBOT_DAEMON_TOKEN": d.token, "ROBOT_DAEMON_TOKEN_FILE": ""},
                    {"ROBOT_DAEMON_TOKEN": "", "ROBOT_DAEMON_TOKEN_FILE": d.token_file}):
            with mock.patch.dict(os.environ, env):
                with Robot(url=d.url) as robot:
                    self.assertTrue(robot.get_state()["awake"])
        with mock.patch.dict(os.environ, {"ROBOT_DAEMON_TOKEN": "not-the-token-0123456789abcdef"}):
            with self.assertRaises(RequestRefusedError) as cm:
                Robot(url=d.url)
            self.assertEqual(cm.exception.status, 401)

    def test_the_owner_socket_needs_no_token(self):
        d = daemon()
        env = {"ROBOT_DAEMON_TOKEN": "", "ROBOT_DAEMON_TOKEN_FILE": "", "ROBOT_DAEMON_SOCKET": d.socket}
        with mock.patch.dict(os.environ, env):
            with Robot(url=d.url) as robot:
                self.assertTrue(robot.get_state()["awake"])
                self.assertIsNone(robot._http._token)
                self.assertEqual(robot._http._socket, d.socket)

    def test_the_default_data_dir_serves_the_default_port_of_this_machine_only(self):
        from robot_sdk.robot import _find_credentials

        with tempfile.TemporaryDirectory() as state:
            os.makedirs(os.path.join(state, "robot-daemon"))
            token_file = os.path.join(state, "robot-daemon", "api-token")
            Path(token_file).write_text("owner-token-0123456789abcdef\n")
            os.chmod(token_file, 0o600)
            env = {"XDG_STATE_HOME": state, "ROBOT_DAEMON_TOKEN": "", "ROBOT_DAEMON_TOKEN_FILE": "", "ROBOT_DAEMON_SOCKET": ""}
            with mock.patch.dict(os.environ, env):
                self.assertEqual(_find_credentials("127.0.0.1", 8000), ("owner-token-0123456789abcdef", None))
                self.assertEqual(_find_credentials("localhost", 8000), ("owner-token-0123456789abcdef", None))
                self.assertEqual(_find_credentials("localhost", None), (None, None))  # http's port 80
                # Another port is another daemon, whose data dir is not this one; another machine
                # never gets a token read from a file of this one.
                self.assertEqual(_find_credentials("127.0.0.1", 8001), (None, None))
                self.assertEqual(_find_credentials("robot.local", 8000), (None, None))
                self.assertEqual(_find_credentials("192.168.1.20", 8000), (None, None))


if __name__ == "__main__":
    unittest.main()


class MDNSAnswerTest(unittest.TestCase):
    """The answer to the SDK's mDNS question, parsed with the standard library alone."""

    def _answer(self, name_bytes, rtype=1, rdata=bytes([10, 77, 0, 1]), flags=0x8400):
        import struct

        header = struct.pack(">6H", 0, flags, 0, 1, 0, 0)
        return header + name_bytes + struct.pack(">HHIH", rtype, 0x8001, 120, len(rdata)) + rdata

    def test_the_robots_address_is_read(self):
        from robot_sdk.robot import _mdns_answer

        name = b"\x05robot\x05local\x00"
        self.assertEqual(_mdns_answer(self._answer(name), ["robot", "local"]), "10.77.0.1")
        self.assertEqual(_mdns_answer(self._answer(b"\x05ROBOT\x05local\x00"), ["robot", "local"]), "10.77.0.1")
        self.assertIsNone(_mdns_answer(self._answer(b"\x05other\x05local\x00"), ["robot", "local"]))
        self.assertIsNone(_mdns_answer(self._answer(name, rtype=28, rdata=bytes(16)), ["robot", "local"]))
        self.assertIsNone(_mdns_answer(self._answer(name, flags=0), ["robot", "local"]), "a question is no answer")

    def test_a_compressed_name_is_followed_and_a_loop_refused(self):
        import struct

        from robot_sdk.robot import _mdns_answer

        # One question robot.local, then an answer whose name points at it (offset 12).
        header = struct.pack(">6H", 0, 0x8400, 1, 1, 0, 0)
        msg = header + b"\x05robot\x05local\x00" + struct.pack(">HH", 1, 1)
        msg += b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 120, 4) + bytes([192, 168, 1, 9])
        self.assertEqual(_mdns_answer(msg, ["robot", "local"]), "192.168.1.9")
        looped = struct.pack(">6H", 0, 0x8400, 0, 1, 0, 0) + b"\xc0\x0c"
        with self.assertRaises(ValueError):
            _mdns_answer(looped, ["robot", "local"])

    def test_the_robots_name_is_a_dns_label(self):
        from robot_sdk.robot import _mdns_label

        self.assertEqual(_mdns_label("My Robot #2"), "my-robot-2")
        self.assertEqual(_mdns_label("!!!"), "robot")
