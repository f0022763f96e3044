"""No tracked file names a path of one developer's machine: every script, default and
documented command works from a fresh clone anywhere (issue 60: the multi-host drill took
its indices from one machine's folder and answered INTERNAL to every call elsewhere).

What is refused: an absolute path whose first component is not a system directory of the
Filesystem Hierarchy Standard (`/build/...`, `/Users/...`), or is a directory of people's
own files (`/home`, `/root`, `/mnt`, `/media`), and anything under the folder this
checkout sits in. What stays: system paths (`/usr/bin/chromium`, `/etc/nginx/...`,
`/var/...`, `/tmp`, `/proc/<pid>/stat`), the container's data volume (`/data`), and URL
paths and JSON pointers, which look the same but name no file (`/v1/geocode`, `/dashboard/`,
`/components/schemas`): their first segments are listed below.

The files are the ones git tracks, read from the index (no `git` process: a fast test).
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
THIS_FILE = "tests/test_machine_paths.py"

# FHS directories a file may name on any machine ...
SYSTEM_ROOTS = {
    "bin", "boot", "dev", "etc", "lib", "lib32", "lib64", "libx32", "opt", "proc", "run",
    "sbin", "srv", "sys", "tmp", "usr", "var",
    "data",  # the image's volume (Dockerfile: VOLUME /data, GEOSVC_DATA_DIR)
}  # fmt: skip
# ... not those that hold a person's own files (/home, /root, /mnt, /media): never allowed.
# URL paths (ours, the upstream APIs' and their fakes') and JSON pointers' first segments.
URL_ROOTS = {
    "v1", "mcp", "auth", "dashboard", "account", "api-keys", "billing", "usage", "oauth",
    "subscription",
    "admin", "metrics", "static", "requests", "well-known",
    "api", "c", "geocoder", "geographies", "tiles",  # upstreams (tests/fakes)
    "components", "definitions", "anyOf", "properties", "items", "$defs",  # JSON pointers
    "spec",  # JSON patches of Kubernetes objects (deploy/kubernetes)
}  # fmt: skip
# `/first/...` not preceded by what makes it part of a URL, a relative path or a
# template (`https://host/v1`, `bench/x`, `{base}/v1`, `~/x`, `.venv/bin`).
ABSOLUTE = re.compile(r"(?<![\w.:/~$@{}\-\]\)>%*+])/([A-Za-z_$][\w.$-]*)/")


def tracked_files(root: Path) -> list[str]:
    """Paths in git's index (format 2 to 4), read directly."""
    git = root / ".git"
    if git.is_file():  # a worktree: `gitdir: <its own git dir>`
        git = Path(git.read_text().removeprefix("gitdir:").strip())
    data = (git / "index").read_bytes()
    signature, version, count = struct.unpack(">4sII", data[:12])
    assert signature == b"DIRC"
    assert version in (2, 3, 4), version
    paths: list[str] = []
    position, previous = 12, b""
    for _ in range(count):
        (flags,) = struct.unpack(">H", data[position + 60 : position + 62])
        position += 62 + (2 if version >= 3 and flags & 0x4000 else 0)
        if version == 4:  # the path is the previous one's, cut by N bytes, plus a suffix
            byte = data[position]
            position += 1
            cut = byte & 0x7F
            while byte & 0x80:  # git's offset varint
                byte = data[position]
                position += 1
                cut = ((cut + 1) << 7) | (byte & 0x7F)
            end = data.index(b"\0", position)
            path = previous[: len(previous) - cut] + data[position:end]
            position = end + 1
        else:
            start = position
            end = data.index(b"\0", position)
            path = data[position:end]
            entry = 62 + (end - start) + (2 if version >= 3 and flags & 0x4000 else 0)
            position = end + (8 - entry % 8 if entry % 8 else 8)
        previous = path
        paths.append(path.decode())
    return paths


def machine_paths(text: str, checkout_parent: Path) -> list[str]:
    found = []
    for match in ABSOLUTE.finditer(text):
        first = match.group(1)
        if first not in SYSTEM_ROOTS and first not in URL_ROOTS:
            found.append(text[match.start() : match.start() + 60].split()[0])
    parent = f"{checkout_parent}/"
    if checkout_parent.parent != checkout_parent and checkout_parent.name not in SYSTEM_ROOTS:
        found += [parent for _ in range(text.count(parent))]
    return found


def test_no_tracked_file_names_a_path_of_this_machine() -> None:
    offenders = {}
    for name in tracked_files(ROOT):
        path = ROOT / name
        if not path.is_file() or name == THIS_FILE:
            continue  # deleted in the work tree; or this file, with its examples below
        raw = path.read_bytes()
        if b"\0" in raw:
            continue  # binary (a PNG): its bytes may spell anything
        found = machine_paths(raw.decode("utf-8", errors="replace"), ROOT.parent)
        if found:
            offenders[name] = sorted(set(found))
    assert offenders == {}, "absolute paths of one machine (make them relative to the checkout)"


def test_the_index_reader_sees_every_tracked_file() -> None:
    files = tracked_files(ROOT)
    assert len(files) == len(set(files)) > 100
    for expected in ("Makefile", "app/cli.py", "tests/test_machine_paths.py"):
        assert expected in files


def test_the_rule_tells_a_machine_path_from_system_and_url_paths() -> None:
    parent = Path("/srv/checkouts")
    refused = [
        "GEOSVC_DATA_DIR=/build/geodata-prebuilt make",
        "see /home/alice/notes.md",
        "`/Users/bob/geosvc/.geosvc`",
        "(/root/.cache/x)",
        "/mnt/c/dev/geosvc",
        "/srv/checkouts/other/file",
    ]
    allowed = [
        "/usr/bin/chromium and /usr/sbin/nginx",
        "/etc/nginx/tls/fullchain.pem; /var/lib/postgresql/data; /tmp/drill; /proc/1/stat",
        "GET /v1/geocode, /dashboard/keys, /auth/signin, /data/celerybeat-schedule",
        "https://example.com/home/page and bench/build/x and ~/build/x and {base}/build/x",
        "#/components/schemas/Error",
    ]
    assert [text for text in refused if not machine_paths(text, parent)] == []
    assert {text: machine_paths(text, parent) for text in allowed} == dict.fromkeys(allowed, [])
