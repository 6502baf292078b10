// The configuration file's watcher: one reload after a burst of writes, also when an editor renames
// a new file over the old one; other files in the folder are ignored.

import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { watchConfigFile } from '../src/config-watcher';
import { tempDir, type TempDir } from './helpers';

/** Resolves once `condition` holds, checking every 20 ms for at most `ms`. */
async function until(condition: () => boolean, ms = 5_000): Promise<void> {
  for (let waited = 0; !condition() && waited < ms; waited += 20)
    await new Promise((done) => setTimeout(done, 20));
}

describe('watchConfigFile', () => {
  let dir: TempDir;
  beforeEach(() => {
    dir = tempDir();
  });
  afterEach(() => dir.remove());

  it('asks for one reload after several quick writes, and one more when a new file is renamed over it', async () => {
    const file = join(dir.path, 'toolgate.yaml');
    writeFileSync(file, 'a: 1\n');
    let changes = 0;
    const watcher = watchConfigFile(file, () => (changes += 1), 100)!;
    try {
      writeFileSync(file, 'a: 2\n');
      writeFileSync(file, 'a: 3\n');
      await until(() => changes > 0);
      await new Promise((done) => setTimeout(done, 300));
      expect(changes).toBe(1);
      writeFileSync(join(dir.path, 'toolgate.yaml.new'), 'a: 4\n');
      renameSync(join(dir.path, 'toolgate.yaml.new'), file);
      await until(() => changes > 1);
      expect(changes).toBe(2);
    } finally {
      watcher.close();
    }
  });

  it('ignores other files in the folder, and asks for nothing once closed', async () => {
    const file = join(dir.path, 'toolgate.yaml');
    writeFileSync(file, 'a: 1\n');
    let changes = 0;
    const watcher = watchConfigFile(file, () => (changes += 1), 50)!;
    writeFileSync(join(dir.path, 'other.txt'), 'x');
    await new Promise((done) => setTimeout(done, 300));
    expect(changes).toBe(0);
    writeFileSync(file, 'a: 2\n');
    watcher.close();
    await new Promise((done) => setTimeout(done, 300));
    expect(changes).toBe(0);
  });
});
