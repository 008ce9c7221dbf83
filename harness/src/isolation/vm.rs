//! One microVM boot: QEMU's `microvm` machine with the image's kernel and initrd,
//! the root image attached read-write with `snapshot=on` (every boot gets a
//! throwaway copy of the same image), and a job disk carrying `run.sh` in and the
//! results out. The guest's init (image/init) prints `lens-guest: up` once the disks
//! are mounted and `lens-guest: exit N` when `run.sh` ends; the host keeps the
//! serial console as the boot's log and reads the job disk back with debugfs.
//!
//! The accelerator is chosen by a probe: KVM when a guest really boots and finishes
//! under it, else TCG (software emulation, 13–45x slower, so TCG wall-clock times
//! are labelled emulated wherever they are reported).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use super::jobdisk;

/// How the guest's CPU runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Accel {
    /// Hardware virtualisation.
    Kvm,
    /// QEMU's software emulation.
    Tcg,
}

impl Accel {
    /// Parses `kvm` or `tcg`.
    pub fn parse(s: &str) -> Option<Accel> {
        match s {
            "kvm" => Some(Accel::Kvm),
            "tcg" => Some(Accel::Tcg),
            _ => None,
        }
    }

    /// True when wall-clock times under it are not native times.
    pub fn emulated(self) -> bool {
        self == Accel::Tcg
    }
}

/// A machine to boot jobs on.
#[derive(Clone, Debug)]
pub struct Machine {
    /// qemu-system-x86_64.
    pub qemu: PathBuf,
    /// The kernel.
    pub kernel: PathBuf,
    /// The initrd.
    pub initrd: PathBuf,
    /// The root image; without one the job runs in the initrd's busybox.
    pub rootfs: Option<PathBuf>,
    /// Accelerator.
    pub accel: Accel,
    /// Guest memory.
    pub memory_mib: u64,
    /// Guest CPUs.
    pub cpus: u32,
}

/// One job: a staged folder holding `run.sh`, and what to bring back.
#[derive(Clone, Debug)]
pub struct Job {
    /// The folder that becomes the job disk (must hold `run.sh`).
    pub staged: PathBuf,
    /// Job disk size, MiB (sparse; room for what the job writes).
    pub disk_mib: u64,
    /// The boot's time limit, boot included.
    pub limit: Duration,
    /// The credential broker, which the guest reaches as 10.0.2.100:80, and
    /// nothing else; `None` leaves the guest without a network.
    pub broker: Option<Forward>,
    /// Folders of the job disk to copy back (e.g. `/out`, `/work`).
    pub readback: Vec<String>,
    /// Copy the guest's console to this process's stderr as it arrives (for long
    /// jobs that report progress).
    pub echo: bool,
}

/// How a guest's connections reach the broker on the host's loopback.
///
/// QEMU's `guestfwd` to a `tcp:` character device connects once, when QEMU
/// starts, and carries that one connection: a guest's second connection (any
/// agent's second model call) is never answered. With `cmd:` QEMU runs a
/// program for each connection instead, with the connection as its stdin and
/// stdout; here that program is `<relay> relay 127.0.0.1:<port>` (the harness
/// binary), which copies both ways.
#[derive(Clone, Debug)]
pub struct Forward {
    /// The broker's port on 127.0.0.1.
    pub port: u16,
    /// The program with the `relay` subcommand (the harness binary).
    pub relay: PathBuf,
}

impl Forward {
    /// The `-netdev` option: restrict=on (no route out) and one forwarded
    /// address. QEMU splits options at commas (a literal one is doubled) and
    /// runs the command with `/bin/sh -c`, so the path is single-quoted.
    fn netdev(&self) -> Result<String> {
        let path = self
            .relay
            .to_str()
            .context("the relay's path is not UTF-8")?;
        if path.contains('\'') {
            bail!(
                "the relay's path {path:?} holds a quote; move the harness binary to a plain path"
            );
        }
        let cmd = format!("'{path}' relay 127.0.0.1:{}", self.port).replace(',', ",,");
        Ok(format!(
            "user,id=net,restrict=on,guestfwd=tcp:10.0.2.100:80-cmd:{cmd}"
        ))
    }
}

/// The `relay` subcommand: carries one connection between this process's stdin
/// and stdout (a guest's connection, as QEMU hands it over) and the TCP address
/// `addr`, until both sides have finished. Writes nothing to stderr, which QEMU
/// also points at the guest's connection.
pub fn relay(addr: &str) -> Result<()> {
    use std::io::{Read, Write};
    let upstream =
        std::net::TcpStream::connect(addr).with_context(|| format!("cannot connect to {addr}"))?;
    let mut to_upstream = upstream.try_clone()?;
    let inbound = std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        let mut stdin = std::io::stdin().lock();
        loop {
            match stdin.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if to_upstream.write_all(&buf[..n]).is_err() {
                        break;
                    }
                }
            }
        }
        let _ = to_upstream.shutdown(std::net::Shutdown::Write);
    });
    let mut from_upstream = upstream;
    let mut stdout = std::io::stdout().lock();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from_upstream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if stdout
                    .write_all(&buf[..n])
                    .and_then(|_| stdout.flush())
                    .is_err()
                {
                    break;
                }
            }
        }
    }
    // The broker has answered and closed: the guest's side ends with it, even
    // if the guest never closes its half.
    drop(inbound);
    Ok(())
}

/// What a boot came to.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Boot {
    /// The accelerator it ran under.
    pub accel: Accel,
    /// The guest reached its job (disks mounted); false means never started.
    pub started: bool,
    /// `run.sh`'s exit code, when the guest reported one.
    pub exit: Option<i32>,
    /// The time limit ended the VM.
    pub timed_out: bool,
    /// Wall time of the whole boot (emulated under TCG).
    pub wall_s: f64,
    /// The serial console, in full.
    pub serial: String,
    /// What QEMU itself printed on stderr.
    pub qemu_stderr: String,
    /// Each read-back folder's copy on the host.
    #[serde(skip)]
    pub returned: BTreeMap<String, PathBuf>,
}

impl Boot {
    /// The last `n` bytes of the serial log, on a line boundary, for records.
    pub fn serial_tail(&self, n: usize) -> String {
        tail(&self.serial, n)
    }

    /// Why the job did not run, when it did not: for cells recorded as never
    /// started rather than lost.
    pub fn not_started(&self) -> Option<String> {
        if self.started {
            return None;
        }
        let why = self
            .serial
            .lines()
            .rev()
            .find(|l| l.starts_with("lens-guest:"))
            .map(String::from)
            .or_else(|| {
                self.qemu_stderr
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .map(String::from)
            })
            .unwrap_or_else(|| {
                if self.timed_out {
                    "the guest did not reach its job before the time limit".into()
                } else {
                    "the guest stopped before reaching its job".into()
                }
            });
        Some(format!("never started: {why}"))
    }
}

fn tail(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_string();
    }
    let mut start = s.len() - n;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    match s[start..].find('\n') {
        Some(i) => s[start + i + 1..].to_string(),
        None => s[start..].to_string(),
    }
}

/// qemu-system-x86_64 on PATH or in /usr/bin.
pub fn find_qemu() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    crate::shim::find_program("qemu-system-x86_64", &path).or_else(|| {
        let p = PathBuf::from("/usr/bin/qemu-system-x86_64");
        p.is_file().then_some(p)
    })
}

/// The host's clock rate in kHz, for `tsc_early_khz=`: without it some guests
/// hang calibrating the TSC under emulation.
pub fn host_khz() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let mhz: f64 = info
        .lines()
        .find(|l| l.starts_with("cpu MHz"))?
        .split_once(':')?
        .1
        .trim()
        .parse()
        .ok()?;
    Some((mhz * 1000.0) as u64)
}

impl Machine {
    /// The QEMU command line for a job disk at `disk`, serial log at `serial`.
    pub fn command(&self, disk: &Path, serial: &Path, job: &Job) -> Result<Command> {
        let mut c = Command::new(&self.qemu);
        c.args([
            "-M",
            "microvm",
            "-nodefaults",
            "-no-user-config",
            "-no-reboot",
        ]);
        c.args(["-display", "none", "-monitor", "none"]);
        match self.accel {
            Accel::Kvm => c.args(["-accel", "kvm", "-cpu", "host"]),
            Accel::Tcg => c.args(["-accel", "tcg", "-cpu", "max"]),
        };
        c.arg("-m").arg(self.memory_mib.to_string());
        c.arg("-smp").arg(self.cpus.to_string());
        c.arg("-chardev")
            .arg(format!("file,id=con,path={}", serial.display()));
        c.args(["-serial", "chardev:con"]);
        c.arg("-kernel").arg(&self.kernel);
        c.arg("-initrd").arg(&self.initrd);
        let mut append = String::from("console=ttyS0 quiet panic=-1 reboot=t");
        if let Some(khz) = host_khz() {
            append.push_str(&format!(" tsc_early_khz={khz}"));
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        append.push_str(&format!(" lens.now={now}"));
        if job.broker.is_some() {
            append.push_str(" lens.net=1");
        }
        c.arg("-append").arg(append);
        if let Some(root) = &self.rootfs {
            c.arg("-drive").arg(format!(
                "id=root,file={},format=raw,if=none,snapshot=on",
                root.display()
            ));
            c.args(["-device", "virtio-blk-device,drive=root"]);
        }
        c.arg("-drive")
            .arg(format!("id=job,file={},format=raw,if=none", disk.display()));
        c.args(["-device", "virtio-blk-device,drive=job"]);
        match &job.broker {
            Some(fwd) => {
                c.arg("-netdev").arg(fwd.netdev()?);
                c.args(["-device", "virtio-net-device,netdev=net"]);
            }
            None => {
                c.arg("-nic").arg("none");
            }
        }
        Ok(c)
    }

    /// Boots `job` and waits for it, its time limit at most. `scratch` receives the
    /// job disk, the serial log and the read-back folders.
    pub fn run(&self, job: &Job, scratch: &Path) -> Result<Boot> {
        if !job.staged.join("run.sh").is_file() {
            bail!("job folder {} has no run.sh", job.staged.display());
        }
        std::fs::create_dir_all(scratch)?;
        let disk = scratch.join("job.img");
        jobdisk::pack(&job.staged, &disk, job.disk_mib)?;
        let serial = scratch.join("serial.log");
        let _ = std::fs::remove_file(&serial);
        let err_path = scratch.join("qemu.err");
        let started_at = Instant::now();
        let mut child = self
            .command(&disk, &serial, job)?
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&err_path)?)
            .spawn()
            .with_context(|| format!("{} did not start", self.qemu.display()))?;
        let mut shown = 0usize;
        let mut echo = |done: bool| {
            if !job.echo {
                return;
            }
            let Ok(bytes) = std::fs::read(&serial) else {
                return;
            };
            // Whole lines only, until the end.
            let upto = if done {
                bytes.len()
            } else {
                bytes
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(shown, |i| i + 1)
            };
            if upto > shown {
                eprint!(
                    "{}",
                    String::from_utf8_lossy(&bytes[shown..upto]).replace('\r', "")
                );
                shown = upto;
            }
        };
        let timed_out = loop {
            if child.try_wait()?.is_some() {
                echo(true);
                break false;
            }
            echo(false);
            if started_at.elapsed() > job.limit {
                let _ = child.kill();
                let _ = child.wait();
                break true;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let wall_s = (started_at.elapsed().as_secs_f64() * 100.0).round() / 100.0;
        let serial =
            String::from_utf8_lossy(&std::fs::read(&serial).unwrap_or_default()).into_owned();
        let qemu_stderr =
            String::from_utf8_lossy(&std::fs::read(&err_path).unwrap_or_default()).into_owned();
        let (started, exit) = parse_serial(&serial);
        let mut returned = BTreeMap::new();
        if started {
            for inside in &job.readback {
                if let Ok(p) = jobdisk::unpack(&disk, inside, &scratch.join("returned")) {
                    returned.insert(inside.clone(), p);
                }
            }
        }
        let _ = std::fs::remove_file(&disk);
        Ok(Boot {
            accel: self.accel,
            started,
            exit,
            timed_out,
            wall_s,
            serial,
            qemu_stderr,
            returned,
        })
    }
}

impl Machine {
    /// Boots a job that is only `script` (no files in, none back), within `limit`.
    pub fn run_script(&self, script: &str, limit: Duration, scratch: &Path) -> Result<Boot> {
        let staged = scratch.join("job");
        let _ = std::fs::remove_dir_all(&staged);
        std::fs::create_dir_all(&staged)?;
        std::fs::write(staged.join("run.sh"), script)?;
        let job = Job {
            staged: staged.clone(),
            disk_mib: 16,
            limit,
            broker: None,
            readback: Vec::new(),
            echo: false,
        };
        let boot = self.run(&job, scratch);
        let _ = std::fs::remove_dir_all(&staged);
        boot
    }
}

/// Whether the guest reached its job, and the job's exit code.
pub fn parse_serial(serial: &str) -> (bool, Option<i32>) {
    let mut started = false;
    let mut exit = None;
    for line in serial.lines() {
        let line = line.trim_end_matches('\r');
        if line.starts_with("lens-guest: up") {
            started = true;
        } else if let Some(code) = line.strip_prefix("lens-guest: exit ") {
            exit = code.trim().parse().ok();
        }
    }
    (started, exit)
}

/// Chooses the accelerator: `LENS_VM_ACCEL` when set, else KVM if a trivial guest
/// boots and finishes under it within ten seconds, else TCG. Returns the choice and
/// why, for the record.
pub fn probe(base: &Machine, scratch: &Path) -> Result<(Accel, String)> {
    if let Ok(v) = std::env::var("LENS_VM_ACCEL") {
        return match Accel::parse(&v) {
            Some(a) => Ok((a, format!("LENS_VM_ACCEL={v}"))),
            None => bail!("LENS_VM_ACCEL={v:?}: use kvm or tcg"),
        };
    }
    if std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_err()
    {
        return Ok((Accel::Tcg, "no usable /dev/kvm".into()));
    }
    let kvm = Machine {
        accel: Accel::Kvm,
        rootfs: None,
        memory_mib: 256,
        cpus: 1,
        ..base.clone()
    };
    let boot = kvm.run_script("exit 0\n", Duration::from_secs(10), &scratch.join("probe"))?;
    if boot.exit == Some(0) {
        return Ok((
            Accel::Kvm,
            format!("KVM booted a probe guest in {:.1} s", boot.wall_s),
        ));
    }
    let why = boot
        .qemu_stderr
        .lines()
        .find(|l| l.contains("error") || l.contains("Error"))
        .map(String::from)
        .unwrap_or_else(|| "the probe guest did not finish in 10 s".into());
    Ok((
        Accel::Tcg,
        format!("KVM failed the probe ({why}); software emulation"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_says_whether_the_job_started_and_how_it_ended() {
        let s = "[    0.3] PCI: Fatal\r\nlens-guest: up (6.1, job /dev/vda)\r\nhello\nlens-guest: exit 7\r\n";
        assert_eq!(parse_serial(s), (true, Some(7)));
        assert_eq!(
            parse_serial("lens-guest: no job disk (label lensjob)\n"),
            (false, None)
        );
        assert_eq!(parse_serial(""), (false, None));
    }

    #[test]
    fn a_boot_that_never_reached_its_job_says_why() {
        let mut b = Boot {
            accel: Accel::Tcg,
            started: false,
            exit: None,
            timed_out: false,
            wall_s: 1.0,
            serial: "[0.1] x\nlens-guest: no job disk (label lensjob)\n".into(),
            qemu_stderr: String::new(),
            returned: BTreeMap::new(),
        };
        assert_eq!(
            b.not_started().as_deref(),
            Some("never started: lens-guest: no job disk (label lensjob)")
        );
        b.serial.clear();
        b.qemu_stderr = "qemu-system-x86_64: -kernel nope: No such file\n".into();
        assert!(b.not_started().unwrap().contains("-kernel nope"));
        b.started = true;
        assert_eq!(b.not_started(), None);
    }

    #[test]
    fn the_network_is_one_forwarded_port_or_none() {
        let m = Machine {
            qemu: "qemu".into(),
            kernel: "k".into(),
            initrd: "i".into(),
            rootfs: Some("r.img".into()),
            accel: Accel::Tcg,
            memory_mib: 512,
            cpus: 1,
        };
        let mut job = Job {
            staged: "s".into(),
            disk_mib: 8,
            limit: Duration::from_secs(1),
            broker: None,
            readback: vec![],
            echo: false,
        };
        let args = |m: &Machine, job: &Job| -> String {
            let c = m
                .command(Path::new("job.img"), Path::new("serial.log"), job)
                .unwrap();
            c.get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let a = args(&m, &job);
        assert!(a.contains("-nic none"), "{a}");
        assert!(
            a.contains("file=r.img,format=raw,if=none,snapshot=on"),
            "{a}"
        );
        assert!(!a.contains("lens.net"), "{a}");
        job.broker = Some(Forward {
            port: 4567,
            relay: "/opt/x,y/harness".into(),
        });
        let a = args(&m, &job);
        // A command per connection (a tcp: device would carry only the first),
        // its path quoted for sh and its comma doubled for QEMU's parser.
        assert!(
            a.contains("user,id=net,restrict=on,guestfwd=tcp:10.0.2.100:80-cmd:'/opt/x,,y/harness' relay 127.0.0.1:4567"),
            "{a}"
        );
        assert!(a.contains("lens.net=1"), "{a}");
        assert!(!a.contains("-nic none"), "{a}");
    }

    #[test]
    fn tails_cut_at_a_line() {
        assert_eq!(tail("abc\ndef\nghi\n", 6), "ghi\n");
        assert_eq!(tail("short", 100), "short");
    }
}
