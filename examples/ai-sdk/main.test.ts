// Runs the example as a user would (its own process, through tsx) and checks what it prints.

import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../..');
const tsx = createRequire(join(root, 'package.json')).resolve('tsx');

test('the AI SDK example refuses bad args, takes the corrected call, and refunds after approval', () => {
  const run = spawnSync(process.execPath, ['--import', tsx, join(__dirname, 'main.ts')], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(run.stderr).not.toMatch(/Error/);
  expect(run.status).toBe(0);
  expect(run.stdout.trim().split('\n')).toEqual([
    expect.stringMatching(/^model read: \[validate-args refused: .*'orderId'.*string/),
    'model read: {"orderId":"A-17","total":42}',
    'approval requested for: refund_order',
    'model read: refunded A-17',
    'Done: refunded A-17',
  ]);
});
