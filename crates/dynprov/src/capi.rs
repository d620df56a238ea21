//! The C ABI, declared in `include/dtrace_dynprov.h`, for programs and language bindings
//! (Python's ctypes, Node's N-API, Ruby's FFI) that define providers at run time:
//!
//! ```c
//! dtrace_dynprov_builder_t *b = dtrace_dynprov_create("myscript");
//! const char *types[] = { "int", "char *" };
//! dtrace_dynprov_add_probe(b, "request", types, 2);
//! dtrace_dynprov_t *p = dtrace_dynprov_enable(b);   // consumes b
//! const dtrace_dynprov_probe_t *req = dtrace_dynprov_probe(p, "request");
//! if (dtrace_dynprov_is_enabled(req)) {
//!     uint64_t args[] = { 200, (uint64_t)"/index.html" };
//!     dtrace_dynprov_fire(req, args, 2);
//! }
//! dtrace_dynprov_destroy(p);
//! ```
//!
//! Errors are a null pointer or -1; `dtrace_dynprov_error()` says why (per thread).

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CStr, CString};

use crate::{Builder, Provider, MAX_ARGS};

/// A probe as C sees it: an owned copy of its addresses.
pub struct CProbe {
    site: usize,
    semaphore: usize,
}

/// A provider as C sees it: the provider (unloaded when this is destroyed) and its probes
/// by name.
pub struct CProvider {
    _provider: Provider,
    probes: Vec<(CString, CProbe)>,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn fail(msg: impl std::fmt::Display) {
    let msg = CString::new(msg.to_string().replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = msg);
}

/// # Safety
/// `s` is null or a NUL-terminated string.
unsafe fn text<'a>(s: *const c_char) -> Option<&'a str> {
    if s.is_null() {
        return None;
    }
    // SAFETY: per this function's contract.
    unsafe { CStr::from_ptr(s) }.to_str().ok()
}

/// Why the last call on this thread failed.
#[no_mangle]
pub extern "C" fn dtrace_dynprov_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// A new provider named `name`, to add probes to; null on error.
///
/// # Safety
/// `name` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn dtrace_dynprov_create(name: *const c_char) -> *mut Builder {
    // SAFETY: per the contract.
    match unsafe { text(name) } {
        Some(n) => Box::into_raw(Box::new(Builder::new(n))),
        None => {
            fail("no provider name");
            std::ptr::null_mut()
        }
    }
}

/// Add probe `name` with `ntypes` argument types (C type names); 0, or -1 on error.
///
/// # Safety
/// `b` comes from `dtrace_dynprov_create`; `name` and the `ntypes` strings of `types` are
/// NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn dtrace_dynprov_add_probe(
    b: *mut Builder,
    name: *const c_char,
    types: *const *const c_char,
    ntypes: c_int,
) -> c_int {
    // SAFETY: per the contract.
    let (Some(b), Some(name)) = (unsafe { b.as_mut() }, unsafe { text(name) }) else {
        fail("no provider or probe name");
        return -1;
    };
    let n = usize::try_from(ntypes).unwrap_or(usize::MAX);
    if n > MAX_ARGS || (n > 0 && types.is_null()) {
        fail(format!("probe {name}: at most {MAX_ARGS} argument types"));
        return -1;
    }
    let mut list = Vec::with_capacity(n);
    for i in 0..n {
        // SAFETY: `types` holds `ntypes` string pointers.
        match unsafe { text(*types.add(i)) } {
            Some(t) => list.push(t),
            None => {
                fail(format!("probe {name}: argument type {i} missing"));
                return -1;
            }
        }
    }
    match b.probe(name, &list) {
        Ok(_) => 0,
        Err(e) => {
            fail(e);
            -1
        }
    }
}

/// Load the provider (consuming the builder, even on error); null on error.
///
/// # Safety
/// `b` comes from `dtrace_dynprov_create` and is not used again.
#[no_mangle]
pub unsafe extern "C" fn dtrace_dynprov_enable(b: *mut Builder) -> *mut CProvider {
    if b.is_null() {
        fail("no provider");
        return std::ptr::null_mut();
    }
    // SAFETY: per the contract, we own the builder now.
    let b = unsafe { Box::from_raw(b) };
    match b.enable() {
        Ok(provider) => {
            let probes = b
                .probes
                .iter()
                .filter_map(|(name, _)| {
                    let p = provider.probe(name)?;
                    Some((
                        CString::new(name.as_str()).ok()?,
                        CProbe {
                            site: p.site,
                            semaphore: p.semaphore,
                        },
                    ))
                })
                .collect();
            Box::into_raw(Box::new(CProvider {
                _provider: provider,
                probes,
            }))
        }
        Err(e) => {
            fail(e);
            std::ptr::null_mut()
        }
    }
}

/// Probe `name` of a loaded provider; null if it has none. Valid until the provider is
/// destroyed.
///
/// # Safety
/// `p` comes from `dtrace_dynprov_enable`; `name` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn dtrace_dynprov_probe(
    p: *const CProvider,
    name: *const c_char,
) -> *const CProbe {
    // SAFETY: per the contract.
    let (Some(p), Some(name)) = (unsafe { p.as_ref() }, unsafe { text(name) }) else {
        return std::ptr::null();
    };
    p.probes
        .iter()
        .find(|(n, _)| n.to_str() == Ok(name))
        .map_or(std::ptr::null(), |(_, probe)| probe as *const CProbe)
}

/// Whether a tracer has the probe enabled.
///
/// # Safety
/// `probe` comes from `dtrace_dynprov_probe` of a provider not destroyed yet.
#[no_mangle]
pub unsafe extern "C" fn dtrace_dynprov_is_enabled(probe: *const CProbe) -> c_int {
    // SAFETY: per the contract.
    match unsafe { probe.as_ref() } {
        Some(p) => probe_of(p).enabled() as c_int,
        None => 0,
    }
}

/// Fire the probe with `nargs` 64-bit arguments (at most 10; a string as its address).
///
/// # Safety
/// `probe` comes from `dtrace_dynprov_probe` of a provider not destroyed yet; `args` holds
/// `nargs` values.
#[no_mangle]
pub unsafe extern "C" fn dtrace_dynprov_fire(probe: *const CProbe, args: *const u64, nargs: c_int) {
    // SAFETY: per the contract.
    let Some(p) = (unsafe { probe.as_ref() }) else {
        return;
    };
    let n = usize::try_from(nargs).unwrap_or(0).min(MAX_ARGS);
    let args = if n == 0 || args.is_null() {
        &[][..]
    } else {
        // SAFETY: `args` holds `nargs` values.
        unsafe { std::slice::from_raw_parts(args, n) }
    };
    probe_of(p).fire(args);
}

/// Unload a provider: its probes disappear.
///
/// # Safety
/// `p` comes from `dtrace_dynprov_enable` and is not used again (nor its probes).
#[no_mangle]
pub unsafe extern "C" fn dtrace_dynprov_destroy(p: *mut CProvider) {
    if !p.is_null() {
        // SAFETY: per the contract, we own it.
        drop(unsafe { Box::from_raw(p) });
    }
}

fn probe_of(p: &CProbe) -> crate::Probe<'static> {
    crate::Probe {
        site: p.site,
        semaphore: p.semaphore,
        _provider: std::marker::PhantomData,
    }
}
