//! Reader for the kernel's BTF type information (/sys/kernel/btf/vmlinux).
