#!/usr/bin/env bash
# Install the real viewers the export tests read rokuprof's files with (tests/test_viewer_*.py)
# and the real Roku clients tests/test_real_clients.py drives against the simulator:
#   Debian golang-go (go tool pprof), chromium (the speedscope app, headless), nodejs/npm;
#   npm speedscope, playwright-core, @paulirish/trace_engine, roku-deploy, roku-debug,
#   @dlenroc/roku-ecp, @dlenroc/roku-debug-server, @dlenroc/roku-developer-server, exactly as
#   package-lock.json pins them.
# The Python readers and clients (nflxprofile, vroomrs, jsonschema, rokuecp) come with
# `pip install '.[test]'`.
# Idempotent: installs only what is missing. Never downloads a browser (playwright-core drives
# /usr/bin/chromium) and runs no npm install scripts.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v go >/dev/null 2>&1 || missing+=(golang-go)
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-viewers: apt-get install ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# playwright-core needs Node.js 20 or later (the machine's own; Debian bookworm's nodejs is 18).
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' || {
  echo "install-viewers: Node.js $(node --version) is too old for playwright-core (needs >= 20)" >&2
  exit 1
}

# node_modules exactly as locked (about ten seconds).
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error

echo "install-viewers: $(go version | cut -d' ' -f3), $(/usr/bin/chromium --version 2>/dev/null | head -1)," \
  "node $(node --version), speedscope $(node -p 'require("./node_modules/speedscope/package.json").version')"
