#!/usr/bin/env bash
# Runs jest on another Node line (the official binary, from the npm registry) in this checkout:
# nothing is compiled at install, so the one install serves every line. Writes the jest report to $2;
# further arguments go to jest (e.g. `--selectProjects gateway mcp` for part of the suite).
#
#   bash .ci/test-on-node.sh 22 .jest-report-node22.json --selectProjects store-sqlite gateway
#
# The services .ci/run started (PostgreSQL, Redis) are shared through the exported URLs.
set -euo pipefail

major=$1
report=$(realpath -m "$2")
shift 2
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=/dev/null
source .ci/node.sh
bin=$(toolgate_node "$major")
export PATH="$bin:$PATH"
echo "node $major: $(node --version) at $bin/node"

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
# Node 22 flags node:sqlite experimental, once per process: in every test process that opens a store
# that is noise in a passing run's output. Other warnings still print.
export NODE_OPTIONS="${NODE_OPTIONS:-} --disable-warning=ExperimentalWarning"
node node_modules/jest/bin/jest.js --ci --forceExit --json --outputFile="$report" "$@"
