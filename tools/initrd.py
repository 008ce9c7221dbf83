"""Writes the microVM's initrd: a gzip'd cpio (newc) archive holding /init, a static
busybox and the kernel modules the guest loads, in the order it loads them.

Written here rather than with cpio(1), which is not on a fresh machine; the newc
format is a 110-byte ASCII header per entry, padded to four bytes.
"""

from __future__ import annotations

import argparse
import gzip
import os
import sys
from pathlib import Path

# Loaded in this order: the virtio transport, the block driver, ext4 and what it
# needs, then the network driver (used only when the job asks for the broker).
MODULES = [
    "drivers/virtio/virtio.ko",
    "drivers/virtio/virtio_ring.ko",
    "drivers/virtio/virtio_mmio.ko",
    "drivers/block/virtio_blk.ko",
    "crypto/crc32c_generic.ko",
    "lib/crc16.ko",
    "fs/mbcache.ko",
    "fs/jbd2/jbd2.ko",
    "fs/ext4/ext4.ko",
    "net/core/failover.ko",
    "drivers/net/net_failover.ko",
    "drivers/net/virtio_net.ko",
]


class Archive:
    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.ino = 1

    def _entry(self, name: str, mode: int, data: bytes = b"") -> None:
        encoded = name.encode() + b"\0"
        fields = [self.ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(encoded), 0]
        self.ino += 1
        header = b"070701" + b"".join(b"%08X" % f for f in fields)
        self.parts.append(header + encoded + b"\0" * (-(110 + len(encoded)) % 4))
        self.parts.append(data + b"\0" * (-len(data) % 4))

    def directory(self, name: str) -> None:
        self._entry(name, 0o040755)

    def file(self, name: str, data: bytes, executable: bool = False) -> None:
        self._entry(name, 0o100755 if executable else 0o100644, data)

    def finish(self) -> bytes:
        self._entry("TRAILER!!!", 0)
        return b"".join(self.parts)


def build(init: Path, busybox: Path, modules: Path) -> bytes:
    a = Archive()
    for d in ["bin", "dev", "proc", "sys", "tmp", "job", "newroot", "lib", "lib/modules"]:
        a.directory(d)
    a.file("init", init.read_bytes(), executable=True)
    a.file("bin/busybox", busybox.read_bytes(), executable=True)
    order = []
    for rel in MODULES:
        src = modules / "kernel" / rel
        if not src.is_file():
            sys.exit(f"initrd.py: module {src} is missing; is --modules the kernel's /lib/modules/<release>?")
        name = Path(rel).stem
        a.file(f"lib/modules/{name}.ko", src.read_bytes())
        order.append(name)
    a.file("lib/modules/order", ("\n".join(order) + "\n").encode())
    return a.finish()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--init", type=Path, required=True)
    p.add_argument("--busybox", type=Path, required=True)
    p.add_argument("--modules", type=Path, required=True, help="the kernel's /lib/modules/<release>")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    data = gzip.compress(build(args.init, args.busybox, args.modules), mtime=0)
    tmp = args.out.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main()
