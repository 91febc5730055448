#!/usr/bin/env bash
# tdbench's entry point. The runner (baseline worktree, fresh-process workers, merger, report)
# is not built yet; until it lands this validates the corpus with every implementation
# (`--validate-only` behaviour) and prints each lane's encoded size per format.
set -euo pipefail
cd "$(dirname "$0")"
exec cargo run --release --quiet --bin validate -- "$@"
