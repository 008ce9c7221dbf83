#!/usr/bin/env bash
# The microVM's kernel and initrd, from pinned Debian packages unpacked (not
# installed): out/image/vmlinuz and out/image/initrd.img. Needs apt-get and
# dpkg-deb (any Debian host) and python3; no root, no network but Debian's archive.
set -euo pipefail
cd "$(dirname "$0")/.."
. image/pins.env
OUT=${IMAGE_OUT:-out/image}
work="$OUT/boot-src"
rm -rf "$work" && mkdir -p "$work"

fetch() { # package version
  if ! (cd "$work" && apt-get download -q "$1=$2" >/dev/null 2>&1); then
    echo "image/build-boot.sh: cannot download $1=$2 from the Debian archive;" \
      "run apt-get update, or bump the pin in image/pins.env" >&2
    exit 1
  fi
}
fetch "$KERNEL_PKG" "$KERNEL_VERSION"
fetch "$BUSYBOX_PKG" "$BUSYBOX_VERSION"
for deb in "$work"/*.deb; do dpkg-deb -x "$deb" "$work/root"; done

cp "$work/root/boot/vmlinuz-$KERNEL_RELEASE" "$OUT/vmlinuz.tmp" && mv "$OUT/vmlinuz.tmp" "$OUT/vmlinuz"
python3 tools/initrd.py --init image/init --busybox "$work/root/bin/busybox" \
  --modules "$work/root/lib/modules/$KERNEL_RELEASE" --out "$OUT/initrd.img"
rm -rf "$work"
echo "image/build-boot.sh: $OUT/vmlinuz and $OUT/initrd.img ($KERNEL_PKG $KERNEL_VERSION)"
