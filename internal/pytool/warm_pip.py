"""pip, started ahead of an install: imports pip's install command (most of pip's start-up time)
while the daemon gets and builds the package, then runs `python -m pip` with the arguments of the
one JSON line it reads, as that command would. No line (the daemon ended it or died): it exits."""

import json
import runpy
import sys

try:
    import pip._internal.cli.main  # noqa: F401
    import pip._internal.commands.install  # noqa: F401
    import pip._internal.resolution.resolvelib.resolver  # noqa: F401
    from pip._internal.network import session

    # pip's user agent asks lsb_release (a Python program) and rustc who the system is, in
    # subprocesses: 0.4-0.5 s of each pip command here. Asked now, it is the install's.
    agent = session.user_agent()
    session.user_agent = lambda: agent
except Exception:  # another pip's layout: run_module imports what it needs, only later
    pass
line = sys.stdin.readline()
if not line:
    sys.exit(0)
sys.argv = ["pip"] + json.loads(line)
runpy.run_module("pip", run_name="__main__", alter_sys=True)
