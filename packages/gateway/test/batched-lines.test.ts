import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { batchedLines } from '../src/batched-lines';

const turn = () => new Promise<void>((done) => setImmediate(done));

describe('batchedLines', () => {
  it('writes the lines of one turn in one write, in order, at the end of that turn', async () => {
    const writes: string[] = [];
    const line = batchedLines((text) => writes.push(text));
    line('{"event":"call","n":1}');
    line('{"event":"call","n":2}');
    line('{"event":"call","n":3}');
    expect(writes).toEqual([]);
    await turn();
    expect(writes).toEqual(['{"event":"call","n":1}\n{"event":"call","n":2}\n{"event":"call","n":3}\n']);
    line('{"event":"reload"}');
    await turn();
    expect(writes).toEqual([
      '{"event":"call","n":1}\n{"event":"call","n":2}\n{"event":"call","n":3}\n',
      '{"event":"reload"}\n',
    ]);
  });

  it('keeps working after a write throws (a closed stderr)', async () => {
    const writes: string[] = [];
    let closed = true;
    const line = batchedLines((text) => {
      if (closed) throw new Error('EPIPE');
      writes.push(text);
    });
    line('lost');
    await turn();
    closed = false;
    line('kept');
    await turn();
    expect(writes).toEqual(['kept\n']);
  });

  it('writes what is left when the process exits in the same turn', () => {
    const module = JSON.stringify(join(__dirname, '../src/batched-lines.ts'));
    const script = `const { batchedLines } = require(${module});
      const line = batchedLines((text) => process.stderr.write(text));
      line('first'); line('last before exit');
      process.exit(3);`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8' });
    expect(run.status).toBe(3);
    expect(run.stderr).toBe('first\nlast before exit\n');
  });
});
