#!/usr/bin/env bash
# Snakemake's own executor-plugin test cases (snakemake.common.tests) and the plugin's own tests
# against snakemake-executor-plugin-falkon (python/snakemake-executor-plugin-falkon).
#
#   python/run-snakemake-tests.sh              # both
#   python/run-snakemake-tests.sh -- -k ctrl   # more pytest arguments
#   python/run-snakemake-tests.sh --prepare    # only make the virtualenv (no build needed; .ci/run
#                                              # does it from PyPI while Maven builds)
#
# Needs the README's build (bin/falkon) and PyPI. Makes a virtualenv (python/target/snakemake-venv,
# or $FALKON_SNAKEMAKE_VENV) with the pinned Snakemake, pytest, the Python client and the plugin.
# Where PyPI cannot be reached it prints one line saying so and exits 0. The last line printed is
# pytest's summary line.
set -euo pipefail

SNAKEMAKE_VERSION=9.27.1
INTERFACE_VERSION=9.4.0   # snakemake-interface-executor-plugins
PYTEST_VERSION=9.2.0
here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
prepare=0
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --prepare) prepare=1 ;;
        --) shift; extra=("$@"); break ;;
        -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "run-snakemake-tests.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

if [ "$prepare" = 0 ] && [ ! -f "$repo/cli/target/falkon-cli.jar" ]; then
    echo "run-snakemake-tests.sh: Falkon is not built; first run: ./mvnw -q install -DskipTests" >&2
    exit 2
fi

venv=${FALKON_SNAKEMAKE_VENV:-$here/target/snakemake-venv}
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
if ! "$venv/bin/pip" install -q --disable-pip-version-check "snakemake==$SNAKEMAKE_VERSION" \
        "snakemake-interface-executor-plugins==$INTERFACE_VERSION" "pytest==$PYTEST_VERSION"; then
    if ! "$venv/bin/python" -c 'import urllib.request; urllib.request.urlopen("https://pypi.org/simple/pip/", timeout=30)' 2>/dev/null; then
        echo "run-snakemake-tests.sh: SKIPPED: PyPI cannot be reached from here, so Snakemake cannot be installed"
        exit 0
    fi
    exit 1
fi
if [ "$prepare" = 1 ]; then
    exit 0
fi
"$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$here" \
    "$here/snakemake-executor-plugin-falkon"

export FALKON_BIN="$repo/bin/falkon"
unset FALKON_DISPATCHER FALKON_TOKEN FALKON_TOKEN_FILE
# what the tests make (pytest's tmp_path, Snakemake's caches) stays under target/, and is removed
work="$here/target/snakemake-tests"
rm -rf "$work"
mkdir -p "$work/tmp" "$work/home"
export TMPDIR="$work/tmp" HOME="$work/home" XDG_CACHE_HOME="$work/home/.cache"
cd "$work"
log="$work/pytest.log"
echo "== Snakemake $SNAKEMAKE_VERSION: its executor-plugin test cases and the plugin's own tests (log: $log)"
set +e
"$venv/bin/python" -m pytest "$here/snakemake-executor-plugin-falkon/tests" -p no:cacheprovider \
    -W ignore::DeprecationWarning -q --durations 10 "${extra[@]}" > "$log" 2>&1
rc=$?
set -e
grep -E "^(FAILED|ERROR) \S+::" "$log" || true
[ $rc -eq 0 ] || tail -n 200 "$log"
tail -n 1 "$log"
exit $rc
