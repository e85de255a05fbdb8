//! TUN devices inside named network namespaces.
//!
//! The forwarder stays in its own namespace. To create a device in another one, the (only)
//! thread enters that namespace with `setns(CLONE_NEWNET)`, opens `/dev/net/tun` and creates
//! the device with `TUNSETIFF` (a device is born in the namespace of the thread that creates
//! it), then returns home. The device is not persistent: it disappears when the forwarder's
//! descriptor closes, so a killed forwarder leaves no device behind, and deleting the
//! namespace afterwards leaves nothing at all.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::PathBuf;

use anyhow::{bail, Context};

use crate::sys::cvt;

/// Where `ip netns add NAME` mounts a namespace.
const NETNS_DIR: &str = "/run/netns";

/// Longest interface name the kernel accepts (IFNAMSIZ - 1).
pub const MAX_DEV_NAME: usize = 15;

/// Bytes of the `struct virtio_net_hdr` in front of every frame in offload mode (the kernel's
/// default TUNSETVNETHDRSZ): flags, gso_type, hdr_len, gso_size, csum_start, csum_offset.
pub const VNET_HDR_LEN: usize = 10;

/// Create TUN device `dev` (IFF_TUN, no packet-information header, non-blocking) inside the
/// namespace `netns`: a name under /run/netns, or a path such as /proc/PID/ns/net. With
/// `offload`, the device also takes and gives TCP frames of up to 64 KB with a virtio-net
/// header in front (IFF_VNET_HDR + TSO and checksum offload), as a veth pair passes them.
pub fn create_in_namespace(netns: &str, dev: &str, offload: bool) -> anyhow::Result<OwnedFd> {
    let target_path = namespace_path(netns);
    let target = File::open(&target_path).with_context(|| {
        format!(
            "network namespace {netns:?}: cannot open {}",
            target_path.display()
        )
    })?;
    let home = File::open("/proc/thread-self/ns/net")
        .context("cannot open /proc/thread-self/ns/net (the forwarder's own namespace)")?;
    enter(&target).with_context(|| format!("cannot enter network namespace {netns:?}"))?;
    let created = create(dev, offload);
    // Going home must succeed, or every later device would land in the wrong namespace.
    enter(&home).context("cannot return to the forwarder's own network namespace")?;
    created.with_context(|| format!("cannot create TUN device {dev:?} in namespace {netns:?}"))
}

/// Why `dev` is not a usable interface name, if it is not.
pub fn check_dev_name(dev: &str) -> Result<(), String> {
    let bad_char = dev.contains(['/', '%', ':']) || dev.contains(char::is_whitespace);
    if dev.is_empty() || dev.len() > MAX_DEV_NAME || bad_char || dev == "." || dev == ".." {
        return Err(format!(
            "{dev:?} is not an interface name: 1-{MAX_DEV_NAME} bytes without '/', '%', ':' or spaces"
        ));
    }
    Ok(())
}

fn namespace_path(netns: &str) -> PathBuf {
    if netns.contains('/') {
        PathBuf::from(netns)
    } else {
        PathBuf::from(NETNS_DIR).join(netns)
    }
}

fn enter(namespace: &File) -> io::Result<()> {
    // SAFETY: plain syscall on a valid descriptor.
    cvt(unsafe { libc::setns(namespace.as_raw_fd(), libc::CLONE_NEWNET) })?;
    Ok(())
}

/// `struct ifreq` as TUNSETIFF reads it: the name, then the flags in the union.
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    /// Rest of the 24-byte union.
    _pad: [u8; 22],
}

fn create(dev: &str, offload: bool) -> anyhow::Result<OwnedFd> {
    if let Err(why) = check_dev_name(dev) {
        bail!("{why}");
    }
    // SAFETY: the path is a valid NUL-terminated string; the result is checked.
    let fd = cvt(unsafe {
        libc::open(
            c"/dev/net/tun".as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    })
    .context("cannot open /dev/net/tun")?;
    // SAFETY: fd was just returned by the kernel and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let vnet = if offload { libc::IFF_VNET_HDR } else { 0 };
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: (libc::IFF_TUN | libc::IFF_NO_PI | vnet) as libc::c_short,
        _pad: [0; 22],
    };
    req.name[..dev.len()].copy_from_slice(dev.as_bytes());
    // SAFETY: req is a valid ifreq-shaped buffer for the duration of the call.
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF, &mut req) })
        .context("TUNSETIFF failed")?;
    if offload {
        let features = libc::TUN_F_CSUM | libc::TUN_F_TSO4 | libc::TUN_F_TSO6;
        // SAFETY: TUNSETOFFLOAD takes the feature bits as the argument value.
        cvt(unsafe {
            libc::ioctl(
                fd.as_raw_fd(),
                libc::TUNSETOFFLOAD,
                features as libc::c_ulong,
            )
        })
        .context("TUNSETOFFLOAD failed")?;
    }
    Ok(fd)
}
