"""Keeps the CI cache's cargo target directories from growing without bound.

Every build of a changed workspace leaves a new copy of each test binary (about 220 MB with
debug info) in ``deps/`` next to the old ones, and cargo never deletes the old ones: the cache
of a long-lived CI machine reached 49 GB of workspace builds and 12 GB of fuzz builds, and a
test that writes a > 4 GiB file then ran out of disk. After each build this script deletes what
the build did not produce.

    python3 .ci/prune.py artifacts <list>          # read cargo's JSON messages on stdin,
                                                   # append the hashes of its artifacts to <list>
    python3 .ci/prune.py keep <profile-dir> <list> # delete files in <profile-dir>/deps whose
                                                   # hash is not in <list>, and incremental/
    python3 .ci/prune.py newest <profile-dir>      # per crate name, keep only the newest build

``keep`` is exact: the list comes from ``--message-format=json`` of the very builds CI runs
(clippy and the test build share the directory). ``newest`` is for cargo-fuzz, which does not
expose cargo's messages: it builds one variant of each crate, so older hashes of a crate name
are stale (only the project's own crates and the fuzz targets are pruned so: a third-party
crate may be current in two versions). Should it ever delete something still current, cargo
rebuilds it (a missing output makes a unit stale), so neither mode can break a build, only cost a rebuild.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys

# <name>-<16 hex digits>, then an optional extension: libfoo-0123456789abcdef.rlib, foo-….d, foo-…
UNIT = re.compile(r"^(?P<name>.+)-(?P<hash>[0-9a-f]{16})(?:\..*)?$")


def artifacts(out: str) -> None:
    hashes = set()
    for line in sys.stdin:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") != "compiler-artifact":
            continue
        for path in msg.get("filenames", []) + [msg.get("executable") or ""]:
            m = UNIT.match(os.path.basename(path))
            if m:
                hashes.add(m["hash"])
    with open(out, "a") as f:
        f.writelines(h + "\n" for h in sorted(hashes))


def size(path: str) -> int:
    return os.lstat(path).st_size


def remove(paths: list[str], where: str) -> None:
    freed = 0
    for p in paths:
        freed += size(p)
        os.remove(p)
    print(f"pruned {len(paths)} stale build files ({freed / 2**30:.1f} GiB) from {where}")


def drop_incremental(profile: str) -> None:
    inc = os.path.join(profile, "incremental")
    if os.path.isdir(inc) and os.listdir(inc):
        shutil.rmtree(inc)
        os.mkdir(inc)
        print(f"removed {inc} (CI builds with CARGO_INCREMENTAL=0)")


def keep(profile: str, listing: str) -> None:
    with open(listing) as f:
        wanted = {h.strip() for h in f if h.strip()}
    if not wanted:  # a failed or empty build: delete nothing
        return
    deps = os.path.join(profile, "deps")
    stale = []
    for name in os.listdir(deps) if os.path.isdir(deps) else []:
        m = UNIT.match(name)
        if m and m["hash"] not in wanted and os.path.isfile(os.path.join(deps, name)):
            stale.append(os.path.join(deps, name))
    remove(stale, deps)
    drop_incremental(profile)


def newest(profile: str) -> None:
    deps = os.path.join(profile, "deps")
    groups: dict[str, dict[str, float]] = {}  # crate name (without "lib") -> hash -> newest mtime
    for name in os.listdir(deps) if os.path.isdir(deps) else []:
        m = UNIT.match(name)
        if m:
            crate = m["name"].removeprefix("lib")
            t = os.lstat(os.path.join(deps, name)).st_mtime
            by_hash = groups.setdefault(crate, {})
            by_hash[m["hash"]] = max(by_hash.get(m["hash"], 0.0), t)
    stale_hashes = set()
    for crate, by_hash in groups.items():
        # Only the project's own crates (and fuzz targets, extensionless executables): a
        # third-party crate may be current in two versions (two hashes) at once.
        ours = crate.startswith(("rntuple", "_lib")) or any(
            os.access(os.path.join(deps, f"{crate}-{h}"), os.X_OK) for h in by_hash
        )
        if not ours:
            continue
        latest = max(by_hash, key=lambda h: by_hash[h])
        stale_hashes |= set(by_hash) - {latest}
    stale = []
    for name in os.listdir(deps) if os.path.isdir(deps) else []:
        m = UNIT.match(name)
        if m and m["hash"] in stale_hashes and os.path.isfile(os.path.join(deps, name)):
            stale.append(os.path.join(deps, name))
    remove(stale, deps)
    drop_incremental(profile)


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "artifacts":
        artifacts(argv[1])
    elif len(argv) == 3 and argv[0] == "keep":
        keep(argv[1], argv[2])
    elif len(argv) == 2 and argv[0] == "newest":
        newest(argv[1])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
