//! The job disk: how work crosses into a microVM and back without a shared
//! filesystem. The host turns a staged folder into an ext4 image (`mkfs.ext4 -d`,
//! label `lensjob`), the guest mounts it at `/job`, and afterwards the host copies
//! folders back out of the image with `debugfs rdump`, which reads the filesystem
//! as a file: no loop mount, no root.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};

/// The label the guest's init looks for.
pub const LABEL: &str = "lensjob";

/// Packs `staged` into a new ext4 image at `image`, `size_mib` large (sparse).
pub fn pack(staged: &Path, image: &Path, size_mib: u64) -> Result<()> {
    let _ = std::fs::remove_file(image);
    let out = Command::new(tool("mkfs.ext4"))
        .args(["-q", "-F", "-L", LABEL, "-E", "root_owner=0:0", "-d"])
        .arg(staged)
        .arg(image)
        .arg(format!("{size_mib}M"))
        .stdin(Stdio::null())
        .output()
        .context("mkfs.ext4 did not start; install e2fsprogs")?;
    if !out.status.success() {
        bail!(
            "mkfs.ext4 could not pack {} into {}: {}",
            staged.display(),
            image.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Copies the folder `inside` (an absolute path in the image, e.g. `/out`) to
/// `dest/<its name>`; returns that path. A folder the guest never made is an error
/// naming it.
pub fn unpack(image: &Path, inside: &str, dest: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dest)?;
    let name = inside
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(inside);
    let target = dest.join(name);
    let _ = std::fs::remove_dir_all(&target);
    let out = Command::new(tool("debugfs"))
        .arg("-R")
        .arg(format!("rdump {inside} {}", dest.display()))
        .arg(image)
        .stdin(Stdio::null())
        .output()
        .context("debugfs did not start; install e2fsprogs")?;
    // debugfs exits 0 even when a path is missing; the folder's absence says it.
    if !out.status.success() || !target.is_dir() {
        bail!(
            "{inside} is not on the job disk {}: {}",
            image.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(target)
}

/// The e2fsprogs tools live in /sbin on Debian, which is not always on PATH.
fn tool(name: &str) -> PathBuf {
    for dir in ["/usr/sbin", "/sbin"] {
        let p = Path::new(dir).join(name);
        if p.is_file() {
            return p;
        }
    }
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_survives_the_round_trip_byte_for_byte() {
        let root = std::env::temp_dir().join(format!("jobdisk-{}", std::process::id()));
        let staged = root.join("staged");
        std::fs::create_dir_all(staged.join("out/deep")).unwrap();
        let blob: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(staged.join("out/blob"), &blob).unwrap();
        std::fs::write(staged.join("out/deep/name with space"), "x\n").unwrap();
        std::fs::write(staged.join("run.sh"), "exit 0\n").unwrap();
        let image = root.join("job.img");
        pack(&staged, &image, 16).unwrap();
        let back = unpack(&image, "/out", &root.join("back")).unwrap();
        assert_eq!(std::fs::read(back.join("blob")).unwrap(), blob);
        assert_eq!(
            std::fs::read_to_string(back.join("deep/name with space")).unwrap(),
            "x\n"
        );
        // A folder that is not there is an error that names it.
        let err = unpack(&image, "/work", &root.join("back")).unwrap_err();
        assert!(
            err.to_string().contains("/work is not on the job disk"),
            "{err}"
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
