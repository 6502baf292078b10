#!/usr/bin/env node
// The `toolgate` bin: a thin shell over runCli.

import { batchedLines } from './batched-lines';
import { runCli } from './commands/main';
import { quietSqliteWarning } from './commands/quiet-warnings';

quietSqliteWarning();

runCli(process.argv.slice(2), {
  out: (text) => process.stdout.write(`${text}\n`),
  err: batchedLines((text) => process.stderr.write(text)),
  env: process.env,
  cwd: process.cwd(),
}).then(
  (code) => {
    // Every command closes what it opened (the gateway drains and closes its servers), so the
    // process ends when the event loop empties.
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`toolgate: ${(error as Error).message}\n`);
    process.exitCode = 1;
  },
);
