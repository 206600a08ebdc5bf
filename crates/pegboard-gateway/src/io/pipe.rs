//! Wider pipes: a `tools/list` of 1,000 tools is 0.3 MB, five times the 64 KiB a Linux pipe
//! holds by default, so the writer would wait on the reader five times per answer. A pipe as wide
//! as an answer takes it in one write.

/// The width asked for: Linux's default ceiling for unprivileged processes
/// (`/proc/sys/fs/pipe-max-size`).
#[cfg(target_os = "linux")]
const WIDTH: i32 = 1024 * 1024;

/// Widen the pipe behind `fd`, when it is one (Linux; elsewhere, and when the system refuses,
/// the pipe stays as it is: only speed depends on it).
#[cfg(unix)]
pub fn widen(fd: impl std::os::fd::AsFd) {
    #[cfg(target_os = "linux")]
    if let Err(e) = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_SETPIPE_SZ(WIDTH)) {
        tracing::debug!("pipe left at its width: {e}");
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

/// Widen a pipe (nothing to do off Unix).
#[cfg(not(unix))]
pub fn widen<T>(_fd: T) {}
