# Sourced by scripts/setup, scripts/lock and scripts/canary: `ensure_uv VENV` puts the locked uv
# (requirements/uv.txt, with its hash) into the virtual environment VENV, creating it if needed,
# with the pip that comes with Python: a machine needs nothing else first.
ensure_uv() {
    local venv="$1" lock
    lock="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/requirements/uv.txt"
    if [ ! -x "$venv/bin/python" ]; then
        echo "Creating the virtual environment in $venv" >&2
        python3 -m venv "$venv"
    fi
    local want
    want="$(grep -m1 -o '^uv==[^ ]*' "$lock")"
    if [ "$("$venv/bin/uv" --version 2>/dev/null | awk '{print "uv==" $2}')" != "$want" ]; then
        "$venv/bin/python" -m pip install -qq --disable-pip-version-check --no-deps \
            --require-hashes -r "$lock"
    fi
}
