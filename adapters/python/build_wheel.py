"""Build a package into a wheel: its PEP 517 build backend (pyproject.toml's build-system,
setuptools' legacy backend without one) called in this process, with the venv's own build tools
(no build isolation), as pip wheel --no-build-isolation calls it in two processes of its own.

Run as `python -I -c <this> <package dir> <wheel dir>`, or started ahead with no arguments: then
it imports setuptools' backend while the daemon gets the package, and reads the two directories
as one JSON line. A package with another backend, or a backend of its own (backend-path), is not
for a process that imported setuptools first: it exits with code 3 and is built afresh."""

import importlib
import json
import os
import sys

try:
    import tomllib
except ImportError:  # Python < 3.11: the TOML reader pip itself uses
    from pip._vendor import tomli as tomllib

SETUPTOOLS = ("setuptools.build_meta", "setuptools.build_meta:__legacy__")
ahead = len(sys.argv) < 3
if ahead:
    try:
        import setuptools.build_meta  # noqa: F401
    except Exception:
        pass
    line = sys.stdin.readline()
    if not line:
        sys.exit(0)
    work, out = json.loads(line)
else:
    work, out = sys.argv[1:3]

os.chdir(work)
system = {}
if os.path.exists("pyproject.toml"):
    with open("pyproject.toml", "rb") as f:
        system = tomllib.load(f).get("build-system", {})
backend = system.get("build-backend") or SETUPTOOLS[1]
if ahead and (backend not in SETUPTOOLS or system.get("backend-path")):
    sys.exit(3)
here = os.path.realpath(os.getcwd())
for entry in reversed(system.get("backend-path", [])):
    path = os.path.realpath(entry)
    if os.path.commonpath([here, path]) != here:
        sys.exit("build-system.backend-path entry %r is outside the package" % entry)
    sys.path.insert(0, path)
module, _, attr = backend.partition(":")
hooks = importlib.import_module(module)
for name in filter(None, attr.split(".")):
    hooks = getattr(hooks, name)
print(hooks.build_wheel(out))
