//! Where a cell runs. `dir`: a fresh temporary directory on this machine. `vm`: a
//! microVM per cell (or one for a whole compare run) booted from the image that
//! `make image` builds, so every cell starts from the same machine and both filters
//! read the same git, python and rustc.

pub mod image;
pub mod jobdisk;
pub mod vm;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Result};
use serde::{Deserialize, Serialize};

use image::{Image, ImageRecord};
use vm::{Accel, Boot, Machine};

/// The isolation a sweep asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    /// A fresh temporary directory per cell.
    Dir,
    /// A microVM per cell.
    Vm,
}

impl Isolation {
    /// Parses `dir` or `vm`.
    pub fn parse(s: &str) -> Option<Isolation> {
        match s {
            "dir" => Some(Isolation::Dir),
            "vm" => Some(Isolation::Vm),
            _ => None,
        }
    }

    /// A fresh working directory for one cell on this machine.
    pub fn cell_dir(self, root: &Path, name: &str) -> Result<PathBuf> {
        let dir = root.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        Ok(dir)
    }
}

/// What a result records about the VM its cells ran in.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct VmRecord {
    /// `kvm` or `tcg`.
    pub accel: Accel,
    /// Why that accelerator.
    pub accel_reason: String,
    /// True under TCG: wall-clock times are emulated, not native.
    pub timings_emulated: bool,
    /// Guest memory, MiB.
    pub memory_mib: u64,
    /// Guest CPUs.
    pub cpus: u32,
    /// The image.
    pub image: ImageRecord,
}

/// A verified image, a probed accelerator, and the settings every boot uses.
#[derive(Clone, Debug)]
pub struct VmHost {
    /// The machine (with the image's root disk).
    pub machine: Machine,
    /// The image.
    pub image: Image,
    /// Why this accelerator.
    pub accel_reason: String,
}

/// Where `make image` puts the image files, under the repository.
pub const IMAGE_DIR: &str = "out/image";

/// The folder of the image files: `LENS_IMAGE_DIR` when set (another build of
/// the image, or an empty folder in a test), else `<repo>/out/image`.
pub fn image_dir(repo: &Path) -> PathBuf {
    match std::env::var_os("LENS_IMAGE_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => repo.join(IMAGE_DIR),
    }
}
/// The manifest they are checked against.
pub const MANIFEST: &str = "image/manifest.json";

impl VmHost {
    /// The preflight: finds QEMU, checks the image against its manifest, probes the
    /// accelerator, and boots the image once running `true`, all before anything is
    /// spent. Each failure is one line: which file or program, and what to run.
    pub fn preflight(repo: &Path, scratch: &Path, memory_mib: u64) -> Result<VmHost> {
        let image = image::open(&repo.join(MANIFEST), &image_dir(repo))?;
        let Some(qemu) = vm::find_qemu() else {
            bail!("qemu-system-x86_64 is not installed; apt-get install qemu-system-x86");
        };
        let base = Machine {
            qemu,
            kernel: image.kernel.clone(),
            initrd: image.initrd.clone(),
            rootfs: Some(image.rootfs.clone()),
            accel: Accel::Tcg,
            memory_mib,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()) as u32,
        };
        let (accel, accel_reason) = vm::probe(&base, scratch)?;
        let machine = Machine { accel, ..base };
        let host = VmHost {
            machine,
            image,
            accel_reason,
        };
        let boot = host.boot_check(scratch)?;
        if boot.exit != Some(0) {
            bail!(
                "the image did not boot to a shell ({}); serial log tail:\n{}",
                boot.not_started()
                    .unwrap_or_else(|| format!("exit {:?}", boot.exit)),
                boot.serial_tail(1500)
            );
        }
        Ok(host)
    }

    fn boot_check(&self, scratch: &Path) -> Result<Boot> {
        self.machine.run_script(
            "set -e\nlens --version\ncommand -v git python3\n",
            Duration::from_secs(180),
            &scratch.join("preflight"),
        )
    }

    /// What results record.
    pub fn record(&self) -> VmRecord {
        VmRecord {
            accel: self.machine.accel,
            accel_reason: self.accel_reason.clone(),
            timings_emulated: self.machine.accel.emulated(),
            memory_mib: self.machine.memory_mib,
            cpus: self.machine.cpus,
            image: self.image.record(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preflight_names_the_missing_image_and_the_fix() {
        let repo = std::env::temp_dir().join(format!("preflight-{}", std::process::id()));
        std::fs::create_dir_all(repo.join("image")).unwrap();
        let err = VmHost::preflight(&repo, &repo.join("scratch"), 512)
            .unwrap_err()
            .to_string();
        assert!(err.contains("image/manifest.json is missing"), "{err}");
        assert!(err.contains("make image"), "{err}");
        std::fs::remove_dir_all(&repo).unwrap();
    }
}
