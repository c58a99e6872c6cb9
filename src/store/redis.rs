//! The Redis store (placeholder; being written).
