#!/usr/bin/env bash
# Installs TDLib 1.8.66's libtdjson.so into .cache/tdjson/ (git-ignored, never committed) from the
# PyPI package python-telegram 2.0.0, which ships it for manylinux x86_64. TDJSON=/path wins.
# Exit 0 when the library is there afterwards, 1 when it could not be installed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${TDJSON:-}" ]; then
  [ -f "$TDJSON" ] && { echo "libtdjson: using TDJSON=$TDJSON"; exit 0; }
  echo "libtdjson: TDJSON=$TDJSON does not exist" >&2; exit 1
fi
dest=.cache/tdjson/libtdjson.so
if [ -f "$dest" ]; then echo "libtdjson: $dest"; exit 0; fi
if [ "$(uname -sm)" != "Linux x86_64" ]; then
  echo "libtdjson: python-telegram ships it for Linux x86_64 only; set TDJSON to another build" >&2; exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: python-telegram==2.0.0 -d "$tmp"
mkdir -p "$(dirname "$dest")"
python3 - "$tmp" "$dest" <<'PY'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/python_telegram-2.0.0-*.whl")[0]
with zipfile.ZipFile(wheel) as z, open(sys.argv[2] + ".partial", "wb") as out:
    out.write(z.read("telegram/lib/libtdjson.so"))
PY
mv "$dest.partial" "$dest"
echo "libtdjson: installed $dest"
