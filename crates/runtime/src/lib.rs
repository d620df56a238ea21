//! Kernel interface: bpf(2) maps, programs, links, perf events and the ring buffer.
