#!/usr/bin/env bash
# Installs TDLib 1.8.66's libtdjson.so into .cache/tdjson/ (git-ignored, never committed) from the
# PyPI package python-telegram 2.0.0, which ships it for manylinux x86_64, checks the wheel's and
# the library's sha256 against pinned values before anything opens them, and checks that it is
# TDLib 1.8.66 (the schema's version) before keeping it. TDJSON=/path wins. ./run.sh runs this
# itself when a lane it measures needs TDLib and the library is absent (unless --no-tdlib).
# Exit 0 when the library is there afterwards, 1 when it could not be installed (the last line
# on stderr says why).
set -euo pipefail
cd "$(dirname "$0")/.."
package=python-telegram==2.0.0
version=1.8.66
# Pinned: the registry's wheel and the library in it are checked against these before anything
# opens them (checked on 2026-12-05; a wheel re-uploaded under the same version is refused).
wheel_name=python_telegram-2.0.0-py3-none-manylinux_2_28_x86_64.whl
wheel_sha256=36f7264be8eb6a9ec727d6ea78ca4b9828aaad491995eb5cb91aa24b76d1ef19
library_sha256=7f5a03fc0c568804b144e145e56ffbde323699ab47a295237b374abc8ef81924
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
sha256_of() { sha256sum "$1" | cut -d' ' -f1; }
if [ ! -f "$tmp/$wheel_name" ]; then
  echo "libtdjson: PyPI served $(ls "$tmp" | grep -v pip.log | tr '\n' ' '), not the pinned $wheel_name; not installed" >&2; exit 1
fi
if [ "$(sha256_of "$tmp/$wheel_name")" != "$wheel_sha256" ]; then
  echo "libtdjson: $wheel_name has sha256 $(sha256_of "$tmp/$wheel_name"), not the pinned $wheel_sha256; not installed" >&2; exit 1
fi
mkdir -p "$(dirname "$dest")"
python3 - "$tmp/$wheel_name" "$dest.partial" <<'PY'
import sys, zipfile
wheel, partial = sys.argv[1:]
with zipfile.ZipFile(wheel) as z, open(partial, "wb") as out:
    out.write(z.read("telegram/lib/libtdjson.so"))
PY
if [ "$(sha256_of "$dest.partial")" != "$library_sha256" ]; then
  echo "libtdjson: the wheel's libtdjson.so has sha256 $(sha256_of "$dest.partial"), not the pinned $library_sha256; not installed" >&2
  rm -f "$dest.partial"; exit 1
fi
# Checked, then asked its version, and only then put in place.
if ! python3 - "$dest.partial" "$version" <<'PY'
import ctypes, json, sys
partial, expected = sys.argv[1:]
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
