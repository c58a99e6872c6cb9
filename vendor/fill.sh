#!/usr/bin/env bash
# Fill vendor/ with every crate edgebench depends on, for offline builds behind a firewall.
# Run it on a machine that reaches crates.io, copy the whole tree across, then put the lines
# this prints into .cargo/config.toml on the offline machine (or pass --offline to cargo).
set -euo pipefail
cd "$(dirname "$0")/.."
cfg=$(mktemp)
trap 'rm -f "$cfg"' EXIT
cargo vendor --locked --versioned-dirs vendor/crates > "$cfg"
echo "# vendor/crates is filled. Add these lines to .cargo/config.toml (in this repository):"
cat "$cfg"
echo "# then build offline: cargo build --release --offline"
