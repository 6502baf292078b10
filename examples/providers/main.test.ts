// Runs the example as a user would (its own process, through tsx) and checks what it prints.

import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../..');
const tsx = createRequire(join(root, 'package.json')).resolve('tsx');

test('the provider-formats example answers bad JSON with a refusal, runs the good call, and flags errors for Anthropic', () => {
  const run = spawnSync(process.execPath, ['--import', tsx, join(__dirname, 'main.ts')], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(run.stderr).not.toMatch(/Error/);
  expect(run.status).toBe(0);
  expect(run.stdout.trim().split('\n')).toEqual([
    expect.stringMatching(
      /^openai c1: \[dispatch refused: the arguments for 'get_weather' were not valid JSON/,
    ),
    'openai c2: Lima: 18°C, clear',
    'openai final: Lima is clear.',
    expect.stringMatching(/^anthropic tu1 \(is_error: true\): \[validate-args refused: .*'city'/),
  ]);
});
