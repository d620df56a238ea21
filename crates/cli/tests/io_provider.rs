//! The `io` provider and `fds[]` on the live kernel: a C program started with `-c` writes
//! and reads 64 KiB with `O_DIRECT` (so each is one bio straight to the disk under the
//! scratch directory) and opens a file at a known path and offset; the tests check the
//! `bufinfo_t`, `devinfo_t` and `fileinfo_t` the D library's translators give against
//! what the program and the kernel (`fstat`, sysfs, `/proc/self/mounts`) say.

mod common;

use std::path::Path;

use common::{dtrace, tagged, trace};

/// `O_DIRECT` I/O of [`SIZE`] bytes: write, then read back, the file named by argv[1];
/// prints the file system's device as `dev MAJOR MINOR`.
const DIRECT_IO: &str = r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

int main(int argc, char **argv) {
    void *buf;
    struct stat st;
    int fd = open(argv[1], O_RDWR | O_CREAT | O_DIRECT, 0644);
    if (fd < 0 || posix_memalign(&buf, 4096, 65536) != 0) { perror("open"); return 1; }
    memset(buf, 'x', 65536);
    if (pwrite(fd, buf, 65536, 0) != 65536) { perror("pwrite"); return 1; }
    if (pread(fd, buf, 65536, 0) != 65536) { perror("pread"); return 1; }
    fstat(fd, &st);
    printf("dev %u %u\n", major(st.st_dev), minor(st.st_dev));
    return 0;
}
"#;

/// Opens argv[1] read-write and appending, seeks to 123, and makes an `ioctl` with a
/// request no driver knows on it, then on fd 1000 (not open), then on its own
/// `/proc/self/status` (another mount); prints the fd and its pid.
const OPEN_FILE: &str = r#"
#include <fcntl.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int fd = open(argv[1], O_RDWR | O_APPEND | O_CREAT, 0644);
    if (fd < 0) { perror("open"); return 1; }
    lseek(fd, 123, SEEK_SET);
    ioctl(fd, 0x7fdead00, 0);
    ioctl(1000, 0x7fdead00, 0);
    ioctl(open("/proc/self/status", O_RDONLY), 0x7fdead01, 0);
    printf("fd %d\n", fd);
    printf("pid %d\n", getpid());
    return 0;
}
"#;

/// The kernel's name of block device `major:minor` (`vda`, `sda1`), from sysfs.
fn block_device_name(major: u32, minor: u32) -> String {
    let link = std::fs::read_link(format!("/sys/dev/block/{major}:{minor}"))
        .expect("the file system's device is a block device in /sys/dev/block");
    link.file_name()
        .expect("a device name")
        .to_string_lossy()
        .into_owned()
}

/// The type of the file system holding `path` (the longest mount point over it).
fn fs_type(path: &Path) -> String {
    let mounts = std::fs::read_to_string("/proc/self/mounts").expect("read mounts");
    mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f.len() > 2 && path.starts_with(f[1])).then(|| (f[1].len(), f[2].to_string()))
        })
        .max()
        .expect("a mount over the path")
        .1
}

#[test]
fn direct_io_fires_start_and_done_with_the_bio_as_written() {
    let dir = common::scratch("io", "direct");
    let exe = common::build_c(&dir, "direct_io", DIRECT_IO, &["-O2"]);
    let data = dir.join("data");
    let cmd = format!("{} {}", exe.display(), data.display());
    let run = trace(
        &cmd,
        r#"io:::start /pid == $target && args[0]->b_bcount == 65536/ {
               printf("start %x %d %d %d %d %d %d:%d %d:%d %d %s %s %s %d %s\n",
                   args[0]->b_flags, args[0]->b_bcount, args[0]->b_bufsize,
                   args[0]->b_resid, args[0]->b_error, args[0]->b_addr,
                   getmajor(args[0]->b_edev), getminor(args[0]->b_edev),
                   args[1]->dev_major, args[1]->dev_minor, args[1]->dev_instance,
                   args[1]->dev_statname, args[1]->dev_pathname,
                   args[2]->fi_pathname, args[2]->fi_offset,
                   args[0]->b_blkno == args[0]->b_lblkno ? "same" : "differ");
               blkno[arg0] = args[0]->b_blkno; }
           io:::done /blkno[arg0]/ {
               printf("done %x %d %s\n", args[0]->b_flags, args[0]->b_bcount,
                   args[0]->b_blkno == blkno[arg0] ? "same-block" : "other-block");
               blkno[arg0] = 0; }"#,
    );
    let dev = tagged(&run.stdout, "dev");
    assert_eq!(dev.len(), 1, "{}", run.stdout);
    let (major, minor) = dev[0].split_once(' ').expect("major minor");
    let (major, minor): (u32, u32) = (major.parse().unwrap(), minor.parse().unwrap());
    let name = block_device_name(major, minor);
    // B_WRITE | B_PHYS, then B_READ | B_PHYS: synchronous I/O straight from the program's
    // memory; the device is the file system's.
    let start = |flags: &str| {
        format!(
            "{flags} 65536 65536 0 0 0 {major}:{minor} {major}:{minor} 0 {name} <unknown> <none> 0 same"
        )
    };
    assert_eq!(
        tagged(&run.stdout, "start"),
        [start("120"), start("60")],
        "{}",
        run.stdout
    );
    assert_eq!(
        tagged(&run.stdout, "done"),
        ["120 65536 same-block", "60 65536 same-block"],
        "{}",
        run.stdout
    );
}

#[test]
fn fds_translates_the_open_files_of_the_current_process() {
    let dir = common::scratch("io", "fds");
    let exe = common::build_c(&dir, "open_file", OPEN_FILE, &["-O2"]);
    let file = dir.join("known.txt");
    let cmd = format!("{} {}", exe.display(), file.display());
    let run = trace(
        &cmd,
        r#"syscall::ioctl:entry /pid == $target && arg1 == 0x7fdead00/ {
               printf("file %d %s|%s|%s|%d|%x|%s|%s\n", arg0, fds[arg0].fi_name,
                   fds[arg0].fi_dirname, fds[arg0].fi_pathname, fds[arg0].fi_offset,
                   fds[arg0].fi_oflags, fds[arg0].fi_fs, fds[arg0].fi_mount); }
           syscall::ioctl:entry /pid == $target && arg1 == 0x7fdead00 && arg0 != 1000/ {
               printf("none %s|%d|%x\n", fds[-1].fi_name, fds[-1].fi_offset,
                   fds[1 << 30].fi_oflags);
               printf("stdout %s\n", fds[1].fi_pathname); }"#,
    );
    let fd = tagged(&run.stdout, "fd");
    assert_eq!(fd.len(), 1, "{}", run.stdout);
    let canonical = dir.canonicalize().expect("canonical scratch directory");
    // O_RDWR | O_APPEND, and O_LARGEFILE, which the kernel adds on 64-bit.
    assert_eq!(
        tagged(&run.stdout, "file"),
        [
            format!(
                "{} known.txt|{}|{}|123|8402|{}|<unknown>",
                fd[0],
                canonical.display(),
                canonical.join("known.txt").display(),
                fs_type(&canonical)
            ),
            "1000 <none>|<none>|<none>|0|0|<none>|<none>".to_string()
        ],
        "{}",
        run.stdout
    );
    assert_eq!(
        tagged(&run.stdout, "none"),
        ["<none>|0|0"],
        "{}",
        run.stdout
    );
    // The program's stdout is a pipe of the test: on no file system's path.
    assert_eq!(
        tagged(&run.stdout, "stdout"),
        ["<unknown>"],
        "{}",
        run.stdout
    );
}

#[test]
fn io_lists_its_probes_with_translated_argument_types() {
    let run = dtrace(&["-lv", "-n", "io:::done"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stdout.ends_with(
            "\tArgument Types\n\t\targs[0]: bufinfo_t *\n\t\targs[1]: devinfo_t *\n\t\targs[2]: fileinfo_t *\n\n"
        ),
        "{}",
        run.stdout
    );
    let run = dtrace(&["-n", "io:::wait-start"]);
    assert_eq!(run.status, 1);
    assert!(
        run.stderr
            .contains("io:::wait-start fires in submit_bio_wait(), where Linux has no tracepoint"),
        "{}",
        run.stderr
    );
}

#[test]
fn fds_paths_cross_mounts_and_give_unknown_past_strsize() {
    let dir = common::scratch("io", "fds-mounts");
    let exe = common::build_c(&dir, "open_file", OPEN_FILE, &["-O2"]);
    let file = dir.join("a-name-longer-than-the-strsize-of-this-test.txt");
    let cmd = format!("{} {}", exe.display(), file.display());
    let program = r#"syscall::ioctl:entry /pid == $target && arg1 == 0x7fdead01/ {
               printf("proc %s|%s|%s|%s\n", fds[arg0].fi_pathname, fds[arg0].fi_dirname,
                   fds[arg0].fi_name, fds[arg0].fi_fs); }
           syscall::ioctl:entry /pid == $target && arg1 == 0x7fdead00 && arg0 != 1000/ {
               printf("long %s|%s\n", fds[arg0].fi_pathname, fds[arg0].fi_name); }"#;
    let run = dtrace(&["-q", "-x", "strsize=48", "-c", &cmd, "-n", program]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let pid = tagged(&run.stdout, "pid");
    assert_eq!(pid.len(), 1, "{}", run.stdout);
    assert_eq!(
        tagged(&run.stdout, "proc"),
        [format!("/proc/{0}/status|/proc/{0}|status|proc", pid[0])],
        "{}",
        run.stdout
    );
    // The path does not fit 48 bytes; the name does.
    assert_eq!(
        tagged(&run.stdout, "long"),
        ["<unknown>|a-name-longer-than-the-strsize-of-this-test.txt"],
        "{}",
        run.stdout
    );
}

/// Writes 8 KiB through the page cache at offset 64 KiB of argv[1], then `fsync`s it (so
/// the program itself writes the pages back).
const BUFFERED_WRITE: &str = r#"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    static char buf[8192];
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) { perror("open"); return 1; }
    memset(buf, 'y', sizeof buf);
    if (pwrite(fd, buf, sizeof buf, 65536) != sizeof buf || fsync(fd) != 0) {
        perror("write");
        return 1;
    }
    return 0;
}
"#;

#[test]
fn start_names_the_file_of_page_cache_io() {
    let dir = common::scratch("io", "buffered");
    let exe = common::build_c(&dir, "buffered", BUFFERED_WRITE, &["-O2"]);
    let file = dir.join("buffered.dat");
    let cmd = format!("{} {}", exe.display(), file.display());
    let run = trace(
        &cmd,
        r#"io:::start /args[2]->fi_name == "buffered.dat"/ {
               printf("start %s %x %d %s|%s|%s|%d|%s|%s|%d\n", execname, args[0]->b_flags,
                   args[0]->b_bcount, args[2]->fi_name, args[2]->fi_dirname,
                   args[2]->fi_pathname, args[2]->fi_offset, args[2]->fi_fs,
                   args[2]->fi_mount, args[2]->fi_oflags); }"#,
    );
    // B_WRITE | B_PAGEIO, synchronous (fsync's writeback asks for REQ_SYNC).
    assert_eq!(
        tagged(&run.stdout, "start"),
        [format!(
            "buffered 110 8192 buffered.dat|<unknown>|<unknown>|65536|{}|<unknown>|0",
            fs_type(&dir)
        )],
        "{}",
        run.stdout
    );
}

/// A translated `fileinfo_t` copied whole keeps its string members' characters.
#[test]
fn fds_copied_whole_keeps_every_member() {
    // The tests run dtrace with /dev/null as its standard input.
    let run = dtrace(&[
        "-qn",
        "BEGIN { this->f = fds[0]; printf(\"%s|%s|%s|%s\\n\", this->f.fi_name,
             this->f.fi_pathname, this->f.fi_dirname, this->f.fi_fs); exit(0); }",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "null|/dev/null|/dev|devtmpfs\n\n");
}

#[test]
fn fds_of_a_task_without_a_file_table_is_none() {
    // An exiting process's last switch comes after its files were closed.
    let run = trace(
        "/bin/true",
        r#"sched:::off-cpu /pid == $target && curthread->files == NULL/ {
               printf("gone %s|%s|%d\n", fds[0].fi_name, fds[0].fi_pathname,
                   fds[0].fi_offset); exit(0); }"#,
    );
    assert_eq!(run.stdout, "gone <none>|<none>|0\n\n", "{}", run.stderr);
}
