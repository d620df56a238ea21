//! USDT providers defined at run time, for programs that only know their probes while
//! running (interpreters of dynamic languages, plugin hosts): create a provider, add
//! probes with argument types, enable it, test and fire its probes, drop it.
//!
//! ```no_run
//! let mut p = dtrace_dynprov::Builder::new("myscript");
//! p.probe("request", &["int", "char *"]).unwrap();
//! let provider = p.enable().unwrap();
//! let request = provider.probe("request").unwrap();
//! if request.enabled() {
//!     let path = c"/index.html";
//!     request.fire(&[200, path.as_ptr() as u64]);
//! }
//! ```
//!
//! Tracers see these probes like any USDT probe (`dtrace -l -p PID`, `myscript$target:::`,
//! `myscript*:::`, also when the provider appears after tracing began), because they are
//! ordinary ones: [`Builder::enable`] writes a small shared object ([`elf`]) into a
//! `memfd`, with one probe site per probe (a function whose first instruction, a 5-byte
//! nop, carries a `.note.stapsdt` note reading the System V argument registers), the
//! probes' is-enabled semaphores, and their declared types (`.note.dtrace`, as `dtrace -G`
//! writes them), and loads it with `dlopen`, so the dynamic linker's debugger interface
//! announces it to tracers waiting for libraries. [`Probe::fire`] calls the site; a tracer's
//! uprobe there reads the arguments. Dropping the [`Provider`] unloads the object.
//!
//! The C ABI (`include/dtrace_dynprov.h`, in `libdtrace_dynprov.so`) is [`capi`].
//!
//! Only x86_64 Linux with glibc's dynamic linker.

pub mod capi;
pub mod elf;

use std::ffi::{c_void, CString};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// At most this many arguments per probe (DTrace's `arg0..arg9`).
pub const MAX_ARGS: usize = 10;

/// A provider being defined.
#[derive(Clone, Debug)]
pub struct Builder {
    name: String,
    probes: Vec<(String, Vec<String>)>,
}

/// Why a provider could not be defined or loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !s.as_bytes()[0].is_ascii_digit()
}

impl Builder {
    /// A provider named `name` (letters, digits and `_`, not ending in a digit: a digit
    /// suffix is a pid to DTrace).
    pub fn new(name: &str) -> Builder {
        Builder {
            name: name.to_string(),
            probes: Vec::new(),
        }
    }

    /// Add probe `name` (`__` is `-` in D) with arguments of C types `types` (`int`,
    /// `uint64_t`, `char *`...; at most [`MAX_ARGS`]).
    pub fn probe(&mut self, name: &str, types: &[&str]) -> Result<&mut Builder, Error> {
        if !valid_name(name) {
            return Err(Error(format!("invalid probe name {name:?}")));
        }
        if types.len() > MAX_ARGS {
            return Err(Error(format!(
                "probe {name} has {} arguments; at most {MAX_ARGS}",
                types.len()
            )));
        }
        if self.probes.iter().any(|(n, _)| n == name) {
            return Err(Error(format!("probe {name} is defined twice")));
        }
        self.probes.push((
            name.to_string(),
            types.iter().map(|t| t.to_string()).collect(),
        ));
        Ok(self)
    }

    /// Build the provider's object and load it: from now on tracers see its probes.
    pub fn enable(&self) -> Result<Provider, Error> {
        if !valid_name(&self.name) || self.name.ends_with(|c: char| c.is_ascii_digit()) {
            return Err(Error(format!("invalid provider name {:?}", self.name)));
        }
        let layout = elf::build(&self.name, &self.probes);
        // Tracers show the memfd's name as the probes' module.
        let name = CString::new(format!("{}.so", self.name)).map_err(|e| Error(e.to_string()))?;
        // SAFETY: memfd_create with a valid C string; the descriptor is owned right away.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(Error(format!(
                "memfd_create: {}",
                std::io::Error::last_os_error()
            )));
        }
        // SAFETY: `fd` is a new descriptor nobody else owns.
        let memfd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut file = std::fs::File::from(memfd.try_clone().map_err(|e| Error(e.to_string()))?);
        std::io::Write::write_all(&mut file, &layout.image).map_err(|e| Error(e.to_string()))?;
        let path = CString::new(format!("/proc/self/fd/{}", memfd.as_raw_fd()))
            .map_err(|e| Error(e.to_string()))?;
        // SAFETY: dlopen of a path naming the object just written; RTLD_NOW resolves
        // nothing (it imports nothing).
        let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            // SAFETY: dlerror returns a C string owned by libc, or null.
            let why = unsafe { libc::dlerror() };
            let why = if why.is_null() {
                "unknown".to_string()
            } else {
                // SAFETY: non-null dlerror results are NUL-terminated.
                unsafe { std::ffi::CStr::from_ptr(why) }
                    .to_string_lossy()
                    .into_owned()
            };
            return Err(Error(format!("dlopen of the provider object: {why}")));
        }
        let mut map: *mut libc::c_void = std::ptr::null_mut();
        // SAFETY: RTLD_DI_LINKMAP stores a `struct link_map *` into `map`.
        let r = unsafe {
            libc::dlinfo(
                handle,
                libc::RTLD_DI_LINKMAP,
                (&mut map as *mut *mut c_void).cast(),
            )
        };
        if r != 0 || map.is_null() {
            // SAFETY: the handle came from dlopen.
            unsafe { libc::dlclose(handle) };
            return Err(Error("dlinfo failed".into()));
        }
        // SAFETY: `l_addr`, the load bias, is the first member of `struct link_map`.
        let base = unsafe { *(map as *const usize) };
        let probes = self
            .probes
            .iter()
            .zip(&layout.probes)
            .map(|((name, _), at)| {
                (
                    name.clone(),
                    base + at.site as usize,
                    base + at.semaphore as usize,
                )
            })
            .collect();
        Ok(Provider {
            handle,
            _memfd: memfd,
            probes,
        })
    }
}

/// A loaded provider. Dropping it unloads its object: its probes disappear.
#[derive(Debug)]
pub struct Provider {
    handle: *mut c_void,
    _memfd: OwnedFd,
    /// (name, site address, semaphore address)
    probes: Vec<(String, usize, usize)>,
}

// SAFETY: the handle is only passed to dlclose once, on drop; the addresses are of a
// mapping that lives as long as the provider, and firing is safe from any thread.
unsafe impl Send for Provider {}
// SAFETY: as above; nothing is mutated through `&Provider`.
unsafe impl Sync for Provider {}

/// One probe of a loaded [`Provider`].
#[derive(Clone, Copy, Debug)]
pub struct Probe<'a> {
    site: usize,
    semaphore: usize,
    _provider: std::marker::PhantomData<&'a Provider>,
}

impl Provider {
    /// Probe `name`, if the provider has it.
    pub fn probe(&self, name: &str) -> Option<Probe<'_>> {
        self.probes
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|&(_, site, semaphore)| Probe {
                site,
                semaphore,
                _provider: std::marker::PhantomData,
            })
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        // SAFETY: the handle came from dlopen and is closed once; no `Probe` outlives
        // the provider (they borrow it).
        unsafe {
            libc::dlclose(self.handle);
        }
    }
}

/// The site's signature: the System V argument registers, then the stack.
type Site = extern "C" fn(u64, u64, u64, u64, u64, u64, u64, u64, u64, u64);

impl Probe<'_> {
    /// Whether a tracer has the probe enabled (its semaphore is nonzero).
    #[inline]
    pub fn enabled(&self) -> bool {
        // SAFETY: the semaphore is a 2-aligned u16 in the provider's writable mapping,
        // alive as long as `self` borrows the provider; the kernel updates it atomically.
        unsafe { std::ptr::read_volatile(self.semaphore as *const u16) != 0 }
    }

    /// Fire the probe with `args` (at most [`MAX_ARGS`]; missing ones are 0). Integers
    /// are passed as 64-bit values; a string as its address (`ptr as u64`, NUL-terminated).
    #[inline]
    pub fn fire(&self, args: &[u64]) {
        let a = |i: usize| args.get(i).copied().unwrap_or(0);
        // SAFETY: the site is a function of the provider's executable mapping (a nop and
        // a ret), alive as long as `self` borrows the provider.
        let site: Site = unsafe { std::mem::transmute::<usize, Site>(self.site) };
        site(a(0), a(1), a(2), a(3), a(4), a(5), a(6), a(7), a(8), a(9));
    }
}
