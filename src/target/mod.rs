//! Targets (placeholder; being written).
