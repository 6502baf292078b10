// Runs one policy decision whose CEL `matches()` meets a pattern that stalls a backtracking engine,
// in a process of its own, and prints as JSON what the model read, how many times the tool ran and
// how long the dispatch took. linear-matches.test.ts spawns it so that a stall is killed by a
// timeout instead of freezing the test runner.
// Usage: node --import tsx matches-attack.ts <length>

import { canonicalChain } from '@toolgate/middleware';
import { createDispatcher, defineTool } from '@toolgate/core';
import { policyGate } from '@toolgate/policy';

const length = Number(process.argv[2] ?? 100_000);
let runs = 0;
const note = defineTool({
  name: 'note',
  description: 'Takes a note.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: () => {
    runs += 1;
    return 'noted';
  },
});
const dispatcher = createDispatcher({
  tools: [note],
  chain: canonicalChain({
    checkInKey: 'matches-attack-check-in-key-0123456789abcdef',
    policy: policyGate([
      {
        name: 'no-runs-of-a',
        tools: ['note'],
        when: `args.text.matches("(a+)+$")`,
        effect: 'deny',
        reason: 'notes that end in a run of a are refused',
      },
    ]),
  }),
});

// A run of 'a' and one character that fails the match: a backtracking engine tries every split.
const started = performance.now();
const outcome = await dispatcher.dispatch({ toolName: 'note', args: { text: `${'a'.repeat(length)}!` } });
const ms = performance.now() - started;
process.stdout.write(JSON.stringify({ ms, kind: outcome.kind, content: outcome.content, runs }));
