"""Flows of the public Python client (huggingface_hub) and its hf CLI against the local hub.

Run by TestOfficialClient (hfclient_test.go) with PYTHONPATH at the client's source, never on its
own: HF_ENDPOINT, HF_TOKEN, RECEIVER_URL, WORK and HUB_USER come from the test. Each step asserts
what a user of the client would see and prints "ok <step>"; the first failure exits non-zero.
"""

import json
import os
import subprocess
import sys
import warnings

import huggingface_hub as hh
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

MAJOR = int(hh.__version__.split(".")[0])
USER = os.environ["HUB_USER"]
WORK = os.environ["WORK"]
RECEIVER = os.environ["RECEIVER_URL"]
SPACE = f"{USER}/app"
api = HfApi()


def step(name):
    print("ok", name, flush=True)


def hf(*args, check=True):
    """Runs the hf CLI of this client source and returns its stdout."""
    code = "import sys; from huggingface_hub.cli.hf import main; sys.argv[0] = 'hf'; sys.exit(main())"
    p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=os.environ)
    if check and p.returncode != 0:
        raise SystemExit(f"hf {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p.stdout + p.stderr


def webhooks():
    made = [
        api.create_webhook(url=f"{RECEIVER}/{i}", watched=[{"type": "user", "name": USER}], domains=["repo", "discussion"], secret="s1")
        for i in range(3)
    ]
    listed = [w.id for w in api.list_webhooks()]
    assert listed == [w.id for w in made], f"list order {listed}, created {[w.id for w in made]}"
    step("webhooks: list in creation order")

    w = api.update_webhook(made[0].id, url=f"{RECEIVER}/moved")
    assert w.url == f"{RECEIVER}/moved" and [(i.type, i.name) for i in w.watched] == [("user", USER)], w
    assert w.secret == "s1" and w.domains == ["repo", "discussion"], w
    step("webhooks: update_webhook(url=...) keeps watched, secret and domains")

    if MAJOR >= 1:
        wid = made[1].id
        hf("webhooks", "update", wid, "--url", f"{RECEIVER}/cli")
        hf("webhooks", "update", wid, "--secret", "s2")
        hf("webhooks", "update", wid, "--domain", "repo")
        info = api.get_webhook(wid)
        assert info.url == f"{RECEIVER}/cli" and info.secret == "s2" and info.domains == ["repo"], info
        assert [(i.type, i.name) for i in info.watched] == [("user", USER)], info
        out = hf("webhooks", "ls", "--format", "json")
        assert [w["id"] for w in json.loads(out)] == [w.id for w in made], out
        hf("webhooks", "info", wid)
        hf("webhooks", "disable", wid)
        assert api.get_webhook(wid).disabled
        hf("webhooks", "enable", wid)
        assert not api.get_webhook(wid).disabled
        hf("webhooks", "delete", wid, "--yes")
        assert wid not in [w.id for w in api.list_webhooks()]
        step("webhooks: hf webhooks update --url/--secret/--domain, ls, info, disable, enable, delete")
    # Keep one webhook on the receiver for the space events; the test reads what it gets.
    for w in api.list_webhooks():
        api.delete_webhook(w.id)
    api.create_webhook(url=f"{RECEIVER}/hook", watched=[{"type": "user", "name": USER}], secret="s1")


README = """---
title: App
sdk: static
tags:
  - robot
  - robot_python_app
---
# App
"""


def write(path, content):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(content)


def spaces():
    url = api.create_repo(SPACE, repo_type="space", space_sdk="static")
    again = api.create_repo(SPACE, repo_type="space", space_sdk="static", exist_ok=True)
    assert str(url) == str(again) and again.repo_id == SPACE and again.repo_type == "space", (url, again)
    step("create_repo(exist_ok=True) on an existing space")

    folder = os.path.join(WORK, "app")
    write(os.path.join(folder, "README.md"), README)
    write(os.path.join(folder, "app", "main.py"), "print('hello')\n")
    write(os.path.join(folder, "app", "static", "index.html"), "<p>hi</p>\n")
    write(os.path.join(folder, "notes", "todo.txt"), "wave\n")
    hf("upload", SPACE, folder, ".", "--repo-type", "space", "--commit-message", "First upload")
    info = api.space_info(SPACE)
    files = sorted(s.rfilename for s in info.siblings)
    assert files == ["README.md", "app/main.py", "app/static/index.html", "notes/todo.txt"], files
    assert "robot_python_app" in info.tags and info.sha, info
    print("head", info.sha, flush=True)
    step("hf upload of a folder to a space")

    # Unchanged files are left out of the next commit (preupload's oid); README changes go
    # through validate-yaml.
    c = api.upload_file(path_or_fileobj=README.replace("# App", "# App v2").encode(), path_in_repo="README.md",
                        repo_id=SPACE, repo_type="space", commit_message="Card v2")
    assert len(c.oid) == 40 and c.commit_url.endswith(c.oid), c
    c = api.create_commit(SPACE, repo_type="space", commit_message="Tidy", operations=[
        CommitOperationDelete("notes/"),
        CommitOperationDelete("app/static/index.html"),
        CommitOperationAdd("app/main.py", b"print('bye')\n"),
    ])
    info = api.space_info(SPACE)
    files = sorted(s.rfilename for s in info.siblings)
    assert files == ["README.md", "app/main.py"] and info.sha == c.oid, (files, info.sha, c.oid)
    print("head", info.sha, flush=True)
    step("upload_file and create_commit with deletions of a file and a folder")

    try:
        api.upload_file(path_or_fileobj=b"x" * (10 * 1024 * 1024 + 1), path_in_repo="weights.bin", repo_id=SPACE, repo_type="space")
        raise SystemExit("a file over 10 MiB was accepted")
    except hh.errors.HfHubHTTPError as e:
        assert "larger than 10 MiB" in str(e), str(e)
    step("a file over 10 MiB gets the hub's refusal")

    try:
        api.upload_file(path_or_fileobj=b"---\ntitle: [oops\n---\n", path_in_repo="README.md", repo_id=SPACE, repo_type="space")
        raise SystemExit("a README whose card does not read was accepted")
    except ValueError as e:
        assert "Invalid metadata in README.md" in str(e), str(e)
    step("validate-yaml refuses a card that does not read")


def downloads():
    local = os.path.join(WORK, "download")
    hf("download", SPACE, "--repo-type", "space", "--local-dir", local)
    got = sorted(os.path.relpath(os.path.join(d, f), local) for d, _, fs in os.walk(local) for f in fs if ".cache" not in d)
    assert got == ["README.md", os.path.join("app", "main.py")], got
    with open(os.path.join(local, "app", "main.py")) as f:
        assert f.read() == "print('bye')\n"
    step("hf download of a space")

    path = hh.hf_hub_download(SPACE, "README.md", repo_type="space", cache_dir=os.path.join(WORK, "cache"))
    with open(path) as f:
        assert "# App v2" in f.read()
    snap = hh.snapshot_download(SPACE, repo_type="space", cache_dir=os.path.join(WORK, "cache"))
    assert os.path.exists(os.path.join(snap, "app", "main.py")), snap
    tree = sorted(f.path for f in api.list_repo_tree(SPACE, repo_type="space", recursive=True))
    assert tree == ["README.md", "app", "app/main.py"], tree
    try:
        hh.hf_hub_download(SPACE, "nope.txt", repo_type="space", cache_dir=os.path.join(WORK, "cache"))
        raise SystemExit("a missing file downloaded")
    except hh.errors.EntryNotFoundError:
        pass
    step("hf_hub_download, snapshot_download, list_repo_tree")


def discussions():
    found = list(api.get_repo_discussions(SPACE, repo_type="space"))
    assert [(d.num, d.title, d.is_pull_request, d.status) for d in found] == [
        (2, "Faster waves", True, "merged"), (1, "Add a dance", False, "open")], found
    details = api.get_discussion_details(SPACE, 2, repo_type="space")
    assert details.merge_commit_oid and details.target_branch == "refs/heads/main", details
    assert [e.type for e in details.events] == ["comment", "status-change"], details.events
    step("get_repo_discussions and get_discussion_details")
    if MAJOR >= 1:
        out = hf("discussions", "list", SPACE, "--repo-type", "space", "--status", "all", "--format", "json")
        assert [d["num"] for d in json.loads(out)] == [2, 1], out
        step("hf discussions list")


with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for name in sys.argv[1:]:
        globals()[name]()
