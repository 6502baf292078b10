#!/usr/bin/env node
// The `toolgate` bin: a thin shell over runCli.

import { runCli } from './commands/main';
import { quietSqliteWarning } from './commands/quiet-warnings';

quietSqliteWarning();

runCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  env: process.env,
  cwd: process.cwd(),
}).then(
  (code) => {
    process.exitCode = code;
    // Serving ended; anything still holding the loop (a lingering socket) must not keep us alive.
    if (process.argv[2] === 'gateway') setTimeout(() => process.exit(code), 100).unref();
  },
  (error: unknown) => {
    process.stderr.write(`toolgate: ${(error as Error).message}\n`);
    process.exitCode = 1;
  },
);
