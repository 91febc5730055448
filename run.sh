#!/usr/bin/env bash
# tdbench's entry point: a thin wrapper over the runner in scripts/ (see ./run.sh --help).
set -euo pipefail
cd "$(dirname "$0")"
exec cargo run --release --quiet -p tdbench-scripts --bin run -- "$@"
