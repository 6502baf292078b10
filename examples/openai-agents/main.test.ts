// The example as a user runs it: its own process, no API key, no network.
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const repoRoot = resolve(__dirname, '../..');
const tsx = pathToFileURL(createRequire(join(repoRoot, 'package.json')).resolve('tsx')).href;

describe('the openai-agents example', () => {
  it('stops the refund for approval, then runs it once the person approves', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', tsx, join(__dirname, 'main.ts')],
      {
        cwd: repoRoot,
        timeout: 60_000,
      },
    );
    expect(stdout.trim().split('\n')).toEqual([
      'approval needed: refund_order {"orderId":"A-17","amount":20}',
      'Done: {"orderId":"A-17","refunded":20}',
    ]);
  });
});
