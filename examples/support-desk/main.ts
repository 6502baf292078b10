// pnpm demo: the support desk, every gate deciding at least once. No network, no API key.
//   --yes / --no     decide the refund check-in by flag (default without a terminal: approve)
//   --json           print every event as one JSON line instead of the trace
//   --store sqlite   keep check-ins and artifacts in SQLite (--db <file> to choose the file)

import { createInterface } from 'node:readline/promises';
import { checkInApproved, checkInDeclined, type CheckInRequest } from '@toolgate/core';
import { runDemo, type DemoOptions } from './demo';

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(name);
const valueOf = (name: string) => {
  const at = argv.indexOf(name);
  return at === -1 ? undefined : argv[at + 1];
};

async function askAtTerminal(request: CheckInRequest) {
  const prompt = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = (await prompt.question(`  Approve '${request.toolName}'? [y/N] `)).trim().toLowerCase();
    if (answer === 'y' || answer === 'yes') {
      const note = (await prompt.question('  Note for the audit trail (optional): ')).trim();
      return checkInApproved(
        note === '' ? { by: 'you, at the terminal' } : { by: 'you, at the terminal', note },
      );
    }
    const reason = (await prompt.question('  Reason the model will read: ')).trim();
    return checkInDeclined({
      by: 'you, at the terminal',
      reason: reason === '' ? 'a person declined the refund' : reason,
    });
  } finally {
    prompt.close();
  }
}

const interactive = process.stdin.isTTY === true && process.stdout.isTTY === true;
const store = valueOf('--store') ?? 'memory';
if (store !== 'memory' && store !== 'sqlite') {
  console.error(`--store must be 'memory' or 'sqlite'; got '${store}'.`);
  process.exit(2);
}
const dbPath = valueOf('--db');
const options: DemoOptions = {
  decide: flag('--yes') ? 'approve' : flag('--no') ? 'decline' : interactive ? 'ask' : 'approve',
  ask: askAtTerminal,
  json: flag('--json'),
  color: process.stdout.isTTY === true && process.env['NO_COLOR'] === undefined && !flag('--no-color'),
  store,
  ...(dbPath !== undefined ? { dbPath } : {}),
  write: (line) => process.stdout.write(`${line}\n`),
};

runDemo(options).then(
  (result) => {
    if (!options.json) console.log(`\nrefunds issued: ${result.refundsIssued}`);
  },
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
