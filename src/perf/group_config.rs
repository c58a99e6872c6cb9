//! `create_group_config [-all]` (reference §5.2): `etc/group.properties` generated from
//! `etc/group-template.properties` by plain text substitution, as the bundle's script does.
//!
//! Invariants: the output is the fixed header followed by the template with every
//! `${DATA_STRUCTURE}` and `${PRODUCT}` replaced; nothing else in the template changes.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The header the script writes (its typos included, so diffs against PadoGrid stay empty).
pub const GENERATED_HEADER: &str =
    "# -------------------------------------------------------------------------
# DO NOT MODIFY THIS FILE.
# This is file is geneated based on the group-template.properties file. All
# changes should be made in that file and regenerate this file by running
# the 'generate_group_config' script.
# -------------------------------------------------------------------------

";

/// What `${DATA_STRUCTURE}` and `${PRODUCT}` become.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProductWords {
    /// `${DATA_STRUCTURE}`, e.g. `RMap`.
    pub data_structure: String,
    /// `${PRODUCT}`, e.g. `Redisson`.
    pub product: String,
}

impl ProductWords {
    /// Redis targets (PadoGrid's Redisson words); edgebench's default.
    pub fn redis() -> Self {
        ProductWords {
            data_structure: "RMap".into(),
            product: "Redisson".into(),
        }
    }

    /// The script's detection: the first of these files found in `etc_dir`.
    pub fn detect(etc_dir: &Path) -> Option<Self> {
        let table = [
            ("pof-config.xml", "NamedCache", "Coherence"),
            ("client-gemfire.properties", "Region", "Geode"),
            ("hazelcast-client.xml", "IMap", "Hazelcast"),
            ("redisson-client.yaml", "RMap", "Redisson"),
        ];
        table
            .iter()
            .find(|(f, _, _)| etc_dir.join(f).is_file())
            .map(|(_, ds, p)| ProductWords {
                data_structure: (*ds).into(),
                product: (*p).into(),
            })
    }
}

/// The generated `group.properties` text for `template`.
pub fn generate_group_config(template: &str, words: &ProductWords) -> String {
    let body = template
        .replace("${DATA_STRUCTURE}", &words.data_structure)
        .replace("${PRODUCT}", &words.product);
    format!("{GENERATED_HEADER}{body}")
}

/// Why generation failed.
#[derive(Debug, thiserror::Error)]
pub enum GroupConfigError {
    /// The template is missing or unreadable.
    #[error("cannot read {path}: {error} (create_group_config needs etc/group-template.properties; copy it from edgebench's etc/)")]
    Template {
        /// The template path.
        path: PathBuf,
        /// The I/O error.
        error: io::Error,
    },
    /// The output could not be written.
    #[error("cannot write {path}: {error}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        error: io::Error,
    },
}

/// Reads `<etc_dir>/group-template.properties` and writes `<etc_dir>/group.properties`; the
/// product words come from [`ProductWords::detect`], else Redis's. Returns the file written.
pub fn create_group_config(etc_dir: &Path) -> Result<PathBuf, GroupConfigError> {
    let template_path = etc_dir.join("group-template.properties");
    let template =
        fs::read_to_string(&template_path).map_err(|error| GroupConfigError::Template {
            path: template_path.clone(),
            error,
        })?;
    let words = ProductWords::detect(etc_dir).unwrap_or_else(ProductWords::redis);
    let out = etc_dir.join("group.properties");
    fs::write(&out, generate_group_config(&template, &words)).map_err(|error| {
        GroupConfigError::Write {
            path: out.clone(),
            error,
        }
    })?;
    Ok(out)
}
