// pnpm demo: the support desk, every gate deciding at least once. No network, no API key.
// Flags: see USAGE in cli.ts (`pnpm demo --help`). Without a terminal and without --yes/--no the
// refund is declined: nobody answered, and a governance tool never approves by default.

import { createInterface } from 'node:readline/promises';
import { checkInApproved, checkInDeclined, type CheckInRequest } from '@toolgate/core';
import { parseDemoArgs, USAGE } from './cli';
import { runDemo, type DemoOptions } from './demo';
import { StoreUnavailable } from './stores';

async function askAtTerminal(request: CheckInRequest) {
  const prompt = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = (await prompt.question(`  Approve '${request.toolName}'? [y/N] `)).trim().toLowerCase();
    if (answer === 'y' || answer === 'yes') {
      const note = (await prompt.question('  Note for the audit trail (optional, Enter to skip): ')).trim();
      return checkInApproved(
        note === '' ? { by: 'you, at the terminal' } : { by: 'you, at the terminal', note },
      );
    }
    const reason = (await prompt.question('  Reason the model will read (optional, Enter to skip): ')).trim();
    return checkInDeclined({
      by: 'you, at the terminal',
      reason: reason === '' ? 'a person declined the refund' : reason,
    });
  } finally {
    prompt.close();
  }
}

const argv = process.argv.slice(2);
if (argv.includes('--help') || argv.includes('-h')) {
  console.log(USAGE);
  process.exit(0);
}
const parsed = parseDemoArgs(argv, {
  interactive: process.stdin.isTTY === true && process.stdout.isTTY === true,
  color: process.stdout.isTTY === true && process.env['NO_COLOR'] === undefined,
});
if (!parsed.ok) {
  console.error(`${parsed.error}\n\n${USAGE}`);
  process.exit(2);
}
const options: DemoOptions = {
  ...parsed.options,
  ask: askAtTerminal,
  ...(process.stdout.columns !== undefined ? { width: process.stdout.columns } : {}),
  write: (line) => process.stdout.write(`${line}\n`),
};

runDemo(options).then(
  (result) => {
    if (options.json) return;
    console.log(`\nrefunds issued: ${result.refundsIssued}`);
    if (options.decide === 'unanswered')
      console.log('(no terminal and no --yes/--no: the refund was declined; pass --yes to approve it)');
  },
  (error: unknown) => {
    // A store that cannot be opened as asked is the user's setup, not a crash: say what to do.
    if (error instanceof StoreUnavailable) {
      console.error(error.message);
      process.exit(2);
    }
    console.error(error);
    process.exit(1);
  },
);
