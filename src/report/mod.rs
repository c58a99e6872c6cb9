//! Exporters over one results model (placeholder; being written).
