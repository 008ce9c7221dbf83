//! The microVM image and its manifest. `make image` writes the kernel, initrd and
//! root image to `out/image/` and describes them in `image/manifest.json`: the pins,
//! every package and tool version read from inside the image, and the size and
//! SHA-256 of each file. A run refuses an image whose files do not match it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::agent_cli::AgentCli;

/// The files of an image, by name under its folder.
pub const FILES: [&str; 3] = ["vmlinuz", "initrd.img", "rootfs.img"];

/// One file's identity.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct FileSum {
    /// Size in bytes.
    pub bytes: u64,
    /// SHA-256, lower-case hex.
    pub sha256: String,
}

/// `image/manifest.json`.
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Manifest {
    /// How it was built.
    pub recipe: String,
    /// When.
    pub built_at: String,
    /// `image/pins.env` as it was.
    pub pins: BTreeMap<String, String>,
    /// Tool versions as the tools print them inside the image.
    pub tools: BTreeMap<String, String>,
    /// Every Debian package and its version.
    pub packages: BTreeMap<String, String>,
    /// Each file's size and checksum.
    pub files: BTreeMap<String, FileSum>,
}

/// What a result records about the image it ran in (the manifest without the
/// package list, which stays in the manifest).
#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct ImageRecord {
    /// When the image was built.
    pub built_at: String,
    /// Pins.
    pub pins: BTreeMap<String, String>,
    /// Tool versions inside the image.
    pub tools: BTreeMap<String, String>,
    /// Number of Debian packages in it.
    pub packages: usize,
    /// Each file's size and checksum.
    pub files: BTreeMap<String, FileSum>,
}

/// A verified image on disk.
#[derive(Debug, Clone)]
pub struct Image {
    /// The kernel.
    pub kernel: PathBuf,
    /// The initrd.
    pub initrd: PathBuf,
    /// The root filesystem image.
    pub rootfs: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
}

impl Image {
    /// What results record about it.
    pub fn record(&self) -> ImageRecord {
        let m = &self.manifest;
        ImageRecord {
            built_at: m.built_at.clone(),
            pins: m.pins.clone(),
            tools: m.tools.clone(),
            packages: m.packages.len(),
            files: m.files.clone(),
        }
    }
}

/// Reads an image manifest; a missing or unreadable one is one line with the fix.
pub fn read_manifest(manifest: &Path) -> Result<Manifest> {
    let text = std::fs::read(manifest).map_err(|_| {
        anyhow::anyhow!(
            "{} is missing: the microVM image is not built; run `make image`",
            manifest.display()
        )
    })?;
    serde_json::from_slice(&text).with_context(|| {
        format!(
            "{} is not an image manifest; rebuild with `make image`",
            manifest.display()
        )
    })
}

/// Loads `manifest` and checks every file under `dir` against it: present, the
/// same size, the same SHA-256. Each failure is one line naming the file and the fix.
pub fn open(manifest: &Path, dir: &Path) -> Result<Image> {
    let m = read_manifest(manifest)?;
    for name in FILES {
        let path = dir.join(name);
        let Some(want) = m.files.get(name) else {
            bail!(
                "{} does not describe {name}; rebuild with `make image`",
                manifest.display()
            );
        };
        let meta = std::fs::metadata(&path).map_err(|_| {
            anyhow::anyhow!(
                "{} is missing; run `make image` to build it",
                path.display()
            )
        })?;
        if meta.len() != want.bytes {
            bail!(
                "{} is {} bytes but {} says {}: not the image the manifest describes; run `make image`",
                path.display(),
                meta.len(),
                manifest.display(),
                want.bytes
            );
        }
        let got = sha256(&path)?;
        if got != want.sha256 {
            bail!(
                "{} has SHA-256 {got} but {} says {}: not the image the manifest describes; run `make image`",
                path.display(),
                manifest.display(),
                want.sha256
            );
        }
    }
    Ok(Image {
        kernel: dir.join("vmlinuz"),
        initrd: dir.join("initrd.img"),
        rootfs: dir.join("rootfs.img"),
        manifest: m,
    })
}

/// Why the image described by `tools` (its manifest's tool versions) cannot run
/// `cli` in a cell: the recipe installs the agent CLIs in `/opt/agents` at the
/// versions the harness pins, and an image built before that, or from other
/// pins, holds none or another one. `None` when it holds the pinned version.
pub fn agent_missing(tools: &BTreeMap<String, String>, cli: AgentCli) -> Option<String> {
    let key = format!("{} (in /opt/agents)", cli.package());
    match tools.get(&key) {
        Some(v) if v == cli.version() => None,
        Some(v) => Some(format!(
            "the microVM image holds {} {v}, but the harness pins {}; rebuild it with `make image`",
            cli.package(),
            cli.version()
        )),
        None => Some(format!(
            "the microVM image holds no {} (its manifest lists no {key:?}); rebuild it with `make image`",
            cli.package()
        )),
    }
}

/// SHA-256 of a file, by coreutils' sha256sum (no hashing crate for one checksum
/// per image file per run).
pub fn sha256(path: &Path) -> Result<String> {
    let out = Command::new("sha256sum")
        .arg(path)
        .output()
        .context("sha256sum did not start; install coreutils")?;
    let text = String::from_utf8_lossy(&out.stdout);
    match text.split_whitespace().next() {
        Some(h) if out.status.success() && h.len() == 64 => Ok(h.to_string()),
        _ => bail!("sha256sum could not read {}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_image(root: &Path) -> PathBuf {
        let dir = root.join("image");
        std::fs::create_dir_all(&dir).unwrap();
        let mut files = BTreeMap::new();
        for name in FILES {
            let p = dir.join(name);
            std::fs::write(&p, format!("{name} contents")).unwrap();
            files.insert(
                name.to_string(),
                FileSum {
                    bytes: std::fs::metadata(&p).unwrap().len(),
                    sha256: sha256(&p).unwrap(),
                },
            );
        }
        let m = Manifest {
            recipe: "test".into(),
            built_at: "now".into(),
            pins: BTreeMap::new(),
            tools: BTreeMap::from([("git --version".into(), "git version 2.47.3".into())]),
            packages: BTreeMap::from([("git".into(), "1:2.47.3".into())]),
            files,
        };
        let path = root.join("manifest.json");
        std::fs::write(&path, serde_json::to_vec(&m).unwrap()).unwrap();
        path
    }

    #[test]
    fn an_agent_cell_needs_the_image_to_hold_the_pinned_cli() {
        let mut tools = BTreeMap::from([(
            "git --version".to_string(),
            "git version 2.47.3".to_string(),
        )]);
        let why = agent_missing(&tools, AgentCli::Codex).unwrap();
        assert!(
            why.contains("holds no @openai/codex") && why.contains("make image"),
            "{why}"
        );
        tools.insert("@openai/codex (in /opt/agents)".into(), "0.168.0".into());
        let why = agent_missing(&tools, AgentCli::Codex).unwrap();
        assert!(
            why.contains("0.168.0") && why.contains(AgentCli::Codex.version()),
            "{why}"
        );
        tools.insert(
            "@openai/codex (in /opt/agents)".into(),
            AgentCli::Codex.version().into(),
        );
        assert_eq!(agent_missing(&tools, AgentCli::Codex), None);
        assert!(agent_missing(&tools, AgentCli::Claude).is_some());
    }

    #[test]
    fn sha256_matches_a_published_vector() {
        let p = std::env::temp_dir().join(format!("sha-{}", std::process::id()));
        std::fs::write(&p, "abc").unwrap();
        assert_eq!(
            sha256(&p).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn an_image_is_used_only_when_it_matches_its_manifest() {
        let root = std::env::temp_dir().join(format!("image-{}", std::process::id()));
        let manifest = fake_image(&root);
        let dir = root.join("image");
        let image = open(&manifest, &dir).unwrap();
        assert_eq!(image.record().packages, 1);
        // Same size, other bytes: refused, naming the file and the fix.
        std::fs::write(dir.join("initrd.img"), "initrd.img contentz").unwrap();
        let err = open(&manifest, &dir).unwrap_err().to_string();
        assert!(err.contains("initrd.img has SHA-256"), "{err}");
        assert!(err.contains("make image"), "{err}");
        // Another size.
        std::fs::write(dir.join("initrd.img"), "x").unwrap();
        let err = open(&manifest, &dir).unwrap_err().to_string();
        assert!(err.contains("is 1 bytes"), "{err}");
        // A missing file and a missing manifest.
        std::fs::remove_file(dir.join("rootfs.img")).unwrap();
        std::fs::write(dir.join("initrd.img"), "initrd.img contents").unwrap();
        let err = open(&manifest, &dir).unwrap_err().to_string();
        assert!(
            err.contains("rootfs.img is missing; run `make image`"),
            "{err}"
        );
        let err = open(&root.join("nope.json"), &dir).unwrap_err().to_string();
        assert!(err.contains("nope.json is missing"), "{err}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
