#!/usr/bin/env bash
# Installs TDLib 1.8.66's libtdjson.so into .cache/tdjson/ (git-ignored, never committed) from the
# PyPI package python-telegram 2.0.0, which ships it for manylinux x86_64, and checks that it is
# TDLib 1.8.66 (the schema's version) before keeping it. TDJSON=/path wins. ./run.sh runs this
# itself when a lane it measures needs TDLib and the library is absent (unless --no-tdlib).
# Exit 0 when the library is there afterwards, 1 when it could not be installed (the last line
# on stderr says why).
set -euo pipefail
cd "$(dirname "$0")/.."
package=python-telegram==2.0.0
version=1.8.66
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
if ! python3 -m pip download --quiet --no-deps --only-binary=:all: "$package" -d "$tmp" >"$tmp/pip.log" 2>&1; then
  tail -n 3 "$tmp/pip.log" >&2
  echo "libtdjson: could not fetch $package from PyPI (is the registry reachable?)" >&2; exit 1
fi
mkdir -p "$(dirname "$dest")"
# Extracted beside, asked its version, and only then put in place.
if ! python3 - "$tmp" "$dest.partial" "$version" <<'PY'
import ctypes, glob, json, sys, zipfile
folder, partial, expected = sys.argv[1:]
wheel = glob.glob(folder + "/python_telegram-2.0.0-*.whl")[0]
with zipfile.ZipFile(wheel) as z, open(partial, "wb") as out:
    out.write(z.read("telegram/lib/libtdjson.so"))
td = ctypes.CDLL(partial)
td.td_execute.restype = ctypes.c_char_p
td.td_execute.argtypes = [ctypes.c_char_p]
answer = json.loads(td.td_execute(b'{"@type":"getOption","name":"version"}'))
found = answer.get("value")
if found != expected:
    sys.exit(f"libtdjson: the package holds TDLib {found}, not {expected}; not installed")
PY
then
  rm -f "$dest.partial"; exit 1
fi
mv "$dest.partial" "$dest"
echo "libtdjson: fetched $dest (TDLib $version) from PyPI $package"
