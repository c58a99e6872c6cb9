//! YCSB's six core workload files, as shipped in `etc/ycsb/` and built into the binary (so
//! `-P workloads/workloada` works from any directory, and `suite` needs no files), and the
//! recommended order to run them in.

/// (name, file text) of each core workload, A to F.
pub const CORE: [(&str, &str); 6] = [
    ("workloada", include_str!("../../etc/ycsb/workloada")),
    ("workloadb", include_str!("../../etc/ycsb/workloadb")),
    ("workloadc", include_str!("../../etc/ycsb/workloadc")),
    ("workloadd", include_str!("../../etc/ycsb/workloadd")),
    ("workloade", include_str!("../../etc/ycsb/workloade")),
    ("workloadf", include_str!("../../etc/ycsb/workloadf")),
];

/// The text of the core workload file `name` (`workloada` … `workloadf`).
pub fn builtin(name: &str) -> Option<&'static str> {
    CORE.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// One step of YCSB's recommended sequence (`doc/coreworkloads.html`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuiteStep {
    /// Load the records with this workload's file.
    Load(&'static str),
    /// Run this workload.
    Run(&'static str),
    /// Delete every record (before the reload for E).
    Clear,
}

/// Load with A's file; run A, B, C, F, D (D inserts, so it goes last); delete the data;
/// reload with E's file; run E.
pub const SUITE: [SuiteStep; 9] = [
    SuiteStep::Load("workloada"),
    SuiteStep::Run("workloada"),
    SuiteStep::Run("workloadb"),
    SuiteStep::Run("workloadc"),
    SuiteStep::Run("workloadf"),
    SuiteStep::Run("workloadd"),
    SuiteStep::Clear,
    SuiteStep::Load("workloade"),
    SuiteStep::Run("workloade"),
];
