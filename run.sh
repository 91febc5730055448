#!/usr/bin/env bash
# tdbench's entry point: a thin wrapper over the runner in scripts/ (see ./run.sh --help).
set -euo pipefail
cd "$(dirname "$0")"
quiet=--quiet
if [ ! -x "${CARGO_TARGET_DIR:-target}/release/run" ]; then
  # The first build shows cargo's progress: a silent few minutes look like a hang.
  echo "run.sh: building the runner first (once; a few minutes on a 2-core machine)…" >&2
  quiet=
fi
exec cargo run --release $quiet -p tdbench-scripts --bin run -- "$@"
