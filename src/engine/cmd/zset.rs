//! (being written)

use super::Spec;

/// The commands of this family.
pub const COMMANDS: &[Spec] = &[];
