"""Writes image/manifest.json for the microVM image in out/image: the pins it was
built from, every Debian package and tool version read from inside it, and the size
and SHA-256 of the kernel, initrd and root image. The harness refuses an image whose
files do not match this manifest."""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
from pathlib import Path

FILES = ["vmlinuz", "initrd.img", "rootfs.img"]


def read_env(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            pins[key] = value
    return pins


def read_tsv(path: Path) -> dict[str, str]:
    rows = {}
    for line in path.read_text().splitlines():
        if "\t" in line:
            key, value = line.split("\t", 1)
            rows[key] = value
    return rows


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--image", type=Path, default=Path("out/image"))
    p.add_argument("--pins", type=Path, default=Path("image/pins.env"))
    p.add_argument("--out", type=Path, default=Path("image/manifest.json"))
    args = p.parse_args()
    files = {}
    for name in FILES:
        path = args.image / name
        if not path.is_file():
            raise SystemExit(f"image_manifest.py: {path} is missing; run make image")
        files[name] = {"bytes": path.stat().st_size, "sha256": sha256(path)}
    manifest = {
        "recipe": "make image (image/build-boot.sh, image/build-rootfs.sh, tools/image_manifest.py)",
        "built_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "pins": read_env(args.pins),
        "tools": read_tsv(args.image / "tool-versions.tsv"),
        "packages": read_tsv(args.image / "packages.tsv"),
        "files": files,
    }
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, args.out)
    print(f"image_manifest.py: wrote {args.out}")


if __name__ == "__main__":
    main()
