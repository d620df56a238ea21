//! Probe providers: discovery, matching and attach descriptions (dtrace, profile).
