//! Turns the provider file into the probe macros `src/main.rs` includes.

fn main() {
    if let Err(e) = dtrace_usdt_build::provider("src/myapp.d") {
        panic!("{e}");
    }
}
