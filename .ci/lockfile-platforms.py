#!/usr/bin/env python3
"""Adds lockfile entries for other platforms' optional binary packages.

The npm registry reachable from this project's machines does not serve every platform's build
of packages such as @biomejs/cli-* and @msgpackr-extract/*, so `npm install` writes a lockfile
without them, and `npm ci` then refuses it as out of sync. An entry carrying only the version
and its os/cpu/libc tells `npm ci` the package exists and does not apply here. Run it after any
`npm install` that changes the lockfile: `python3 .ci/lockfile-platforms.py`.
"""
import json
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "package-lock.json"
with open(path) as f:
    lock = json.load(f)
packages = lock["packages"]

OSES = {"android", "darwin", "linux", "win32", "freebsd", "openbsd", "sunos", "aix"}
CPUS = {"arm64", "x64", "arm", "ia32", "ppc64", "s390x", "riscv64", "loong64"}

added = 0
for meta in list(packages.values()):
    for dep, version in (meta.get("optionalDependencies") or {}).items():
        key = "node_modules/" + dep
        if key in packages:
            continue
        parts = dep.split("/")[-1].split("-")
        os_ = [p for p in parts if p in OSES]
        cpu = [p for p in parts if p in CPUS]
        if not os_ or not cpu:
            continue
        entry = {"version": version, "optional": True, "os": os_[:1], "cpu": cpu[:1]}
        if meta.get("dev"):
            entry["dev"] = True
        if "musl" in parts:
            entry["libc"] = ["musl"]
        packages[key] = entry
        added += 1

with open(path, "w") as f:
    json.dump(lock, f, indent=2)
    f.write("\n")
print(f"{path}: added {added} platform entries")
