# The microVM image (image/README.md): kernel and initrd from pinned Debian packages,
# a debootstrapped root filesystem with the pinned tools, lens and rtk, and the
# manifest the harness checks it against.
IMAGE_DIR := out/image
BOOT_FILES := $(IMAGE_DIR)/vmlinuz $(IMAGE_DIR)/initrd.img

.PHONY: image image-boot vm-smoke

image-boot: $(BOOT_FILES)

$(BOOT_FILES) &: image/build-boot.sh image/init image/pins.env tools/initrd.py
	bash image/build-boot.sh

# Needs root (debootstrap, chroot), debootstrap and e2fsprogs.
image: build image-boot
	bash image/build-rootfs.sh
	python3 tools/image_manifest.py --image $(IMAGE_DIR) --out image/manifest.json

# Boot the kernel and initrd under QEMU, run a command, read its result back from
# the job disk (needs qemu-system-x86; .ci/run installs it).
vm-smoke: image-boot
	$(CARGO) test --workspace --locked --test vm_smoke -- --ignored
