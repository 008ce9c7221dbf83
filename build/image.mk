# The microVM image (image/README.md): kernel and initrd from pinned Debian packages,
# a debootstrapped root filesystem with the pinned tools, lens and rtk, and the
# manifest the harness checks it against.
IMAGE_DIR := out/image
BOOT_FILES := $(IMAGE_DIR)/vmlinuz $(IMAGE_DIR)/initrd.img

.PHONY: image image-boot vm-smoke vm-smoke-if-possible

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

# make test's last step: the smoke test where the machine can boot a microVM (and
# download the pinned kernel from Debian's archive), else one line saying why not.
VM_TOOLS := qemu-system-x86_64 apt-get dpkg-deb
vm-smoke-if-possible:
	@missing=""; for t in $(VM_TOOLS); do command -v $$t >/dev/null || missing="$$missing $$t"; done; \
	[ -x /sbin/debugfs ] || command -v debugfs >/dev/null || missing="$$missing debugfs"; \
	if [ -z "$$missing" ]; then $(MAKE) --no-print-directory vm-smoke; \
	elif [ -n "$$LENS_REQUIRE_VM" ]; then echo "make test: the microVM smoke test cannot run, missing:$$missing (apt-get install qemu-system-x86 e2fsprogs)"; exit 1; \
	else echo "make test: skipped the microVM smoke test, missing:$$missing (apt-get install qemu-system-x86 e2fsprogs; LENS_REQUIRE_VM=1 makes this a failure)"; fi
