//! Consumer: record decoding, aggregation merging and DTrace output formatting.
