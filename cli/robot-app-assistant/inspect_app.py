"""Reads what `robot-app-assistant check` needs from an app package, without importing it.

Usage: python3 inspect_app.py <package dir>. Prints one JSON object:
  python:    {"version": [3, 11, 7], "executable": "/usr/bin/python3", "bundled_wheels": [ensurepip's wheels]}
  pyproject: {"missing": true}, {"error": {"line", "msg"}}, or {"name", "has_project", "build_backend",
             "groups": {group: {name: {"value", "line"}}}, "header_lines": {group: line}}
  modules:   for each module an entry point of any group names:
             {"file": null} (no source), or {"file", "error": {"line", "msg"}}, or
             {"file", "classes": {name: {"line", "bases", "derives", "run", "methods"}}, "main_block": {...}}
Python's standard library only (tomllib needs Python 3.11).
"""

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(sys.argv[1])
SDK_MODULE = "robot_sdk"
BASE_CLASS = "RobotApp"


def toml_line(message):
    m = re.search(r"\(at line (\d+), column \d+\)", message)
    return int(m.group(1)) if m else 0


def read_pyproject():
    path = ROOT / "pyproject.toml"
    if not path.is_file():
        return {"missing": True}
    try:
        import tomllib
    except ImportError:
        return {"error": {"line": 0, "msg": "reading pyproject.toml needs Python 3.11 or newer (tomllib)"}}
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return {"error": {"line": toml_line(str(e)), "msg": re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e))}}
    project = data.get("project")
    out = {"name": None, "build_backend": None, "groups": {}, "header_lines": {}, "has_project": isinstance(project, dict)}
    build = data.get("build-system")
    if isinstance(build, dict) and isinstance(build.get("build-backend"), str):
        out["build_backend"] = build["build-backend"]
    if not isinstance(project, dict):
        return out
    if isinstance(project.get("name"), str):
        out["name"] = project["name"]
    eps = project.get("entry-points")
    if not isinstance(eps, dict):
        return out
    lines = text.splitlines()
    for group, entries in eps.items():
        if not isinstance(entries, dict):
            continue
        header = 0
        pattern = re.compile(r"^\s*\[\s*project\s*\.\s*entry-points\s*\.\s*[\"']?" + re.escape(group) + r"[\"']?\s*\]")
        for i, line in enumerate(lines, 1):
            if pattern.match(line):
                header = i
                break
        out["header_lines"][group] = header
        group_out = {}
        for name, value in entries.items():
            # The key's line: inside the group's table, or anywhere when the group is an inline table.
            line_no = header
            key = re.compile(r"^\s*[\"']?" + re.escape(name) + r"[\"']?\s*=")
            for i in range(header, len(lines)):
                if header and lines[i].lstrip().startswith("["):
                    break
                if key.match(lines[i]):
                    line_no = i + 1
                    break
            group_out[name] = {"value": value if isinstance(value, str) else None, "line": line_no}
        out["groups"][group] = group_out
    return out


def dotted(node):
    """The dotted name of a Name or Attribute node, or None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return inner + "." + node.attr if inner else None
    return None


def inspect_module(path):
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return {"error": {"line": 0, "msg": str(e)}}
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as e:
        return {"error": {"line": e.lineno or 0, "msg": f"SyntaxError: {e.msg}"}}
    # Names under which this module sees the base class and the SDK module.
    base_names, sdk_names = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == SDK_MODULE:
            for alias in node.names:
                if alias.name == BASE_CLASS:
                    base_names.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == SDK_MODULE:
                    sdk_names.add(alias.asname or alias.name)
    classes = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        methods = {}
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = [a.arg for a in item.args.posonlyargs + item.args.args]
                methods[item.name] = {"line": item.lineno, "args": args, "async": isinstance(item, ast.AsyncFunctionDef),
                                      "vararg": item.args.vararg is not None}
        classes[node.name] = {"line": node.lineno, "bases": [dotted(b) or ast.unparse(b) for b in node.bases],
                              "methods": methods}

    def derives(name, seen):
        if name in seen or name not in classes:
            return False
        seen.add(name)
        for base in classes[name]["bases"]:
            if base in base_names or any(base == f"{s}.{BASE_CLASS}" for s in sdk_names):
                return True
            if derives(base, seen):
                return True
        return False

    def find_run(name, seen):
        if name in seen or name not in classes:
            return None
        seen.add(name)
        if "run" in classes[name]["methods"]:
            return classes[name]["methods"]["run"]
        for base in classes[name]["bases"]:
            found = find_run(base, seen)
            if found:
                return found
        return None

    for name, info in classes.items():
        info["derives"] = derives(name, set())
        info["run"] = find_run(name, set())

    main_block = {"present": False, "line": 0, "calls_wrapped_run": False, "handles_keyboard_interrupt": False}
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            t = node.test
            sides = [t.left] + list(t.comparators)
            names = {s.id for s in sides if isinstance(s, ast.Name)}
            consts = {s.value for s in sides if isinstance(s, ast.Constant)}
            if "__name__" in names and "__main__" in consts:
                main_block["present"], main_block["line"] = True, node.lineno
                for sub in ast.walk(node):
                    if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "wrapped_run":
                        main_block["calls_wrapped_run"] = True
                    if isinstance(sub, ast.ExceptHandler) and sub.type is not None:
                        caught = [dotted(e) for e in (sub.type.elts if isinstance(sub.type, ast.Tuple) else [sub.type])]
                        if "KeyboardInterrupt" in caught or "BaseException" in caught:
                            main_block["handles_keyboard_interrupt"] = True
    return {"classes": classes, "main_block": main_block, "base_imported": bool(base_names or sdk_names)}


def module_file(module):
    """The source file of a dotted module name, in the flat or the src layout."""
    rel = Path(*module.split("."))
    for base in (ROOT, ROOT / "src"):
        for candidate in (base / rel.with_suffix(".py"), base / rel / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def bundled_wheels():
    """The pip and setuptools wheels this interpreter's ensurepip installs, or [] (Debian keeps them elsewhere)."""
    try:
        import ensurepip
    except ImportError:
        return []
    bundled = Path(ensurepip.__file__).parent / "_bundled"
    return sorted(str(p) for p in bundled.glob("*.whl")) if bundled.is_dir() else []


def main():
    pyproject = read_pyproject()
    out = {"python": {"version": list(sys.version_info[:3]), "executable": sys.executable, "bundled_wheels": bundled_wheels()},
           "pyproject": pyproject, "modules": {}}
    for entries in pyproject.get("groups", {}).values():
        for entry in entries.values():
            module = (entry["value"] or "").split(":")[0].strip()
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", module) or module in out["modules"]:
                continue
            path = module_file(module)
            if path is None:
                out["modules"][module] = {"file": None}
            else:
                info = inspect_module(path)
                info["file"] = str(path.relative_to(ROOT))
                out["modules"][module] = info
    json.dump(out, sys.stdout)


main()
