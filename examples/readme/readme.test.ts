// Every ```ts block in the root README and in docs/*.md is a complete program: this runs each one and
// checks that the lines it prints match its `// →` comments, so the docs cannot drift from the code.

import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const out = join(__dirname, '.snippets');
const tsx = createRequire(join(root, 'package.json')).resolve('tsx');
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
const snippets = pages.flatMap((page) =>
  [...readFileSync(join(root, page), 'utf8').matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map(
    (match, index) => [`${page} #${index + 1}`, match[1]!] as const,
  ),
);

/** The `// → …` comments, in order: what the snippet promises to print. */
function promised(code: string): string[] {
  return [...code.matchAll(/^\/\/ → (.*)$/gm)].map((match) => match[1]!.trim());
}

beforeAll(() => mkdirSync(out, { recursive: true }));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('README and docs snippets', () => {
  it('has runnable snippets to check', () => {
    expect(snippets.length).toBeGreaterThanOrEqual(5);
  });

  it.each(snippets)('%s runs and prints what it promises', (where, code) => {
    const file = join(out, `${where.replace(/[^A-Za-z0-9]+/g, '-')}.ts`);
    writeFileSync(file, code);
    const run = spawnSync(process.execPath, ['--import', tsx, file], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const printed = run.stdout.split('\n').map((line) => line.trim());
    let from = 0;
    for (const line of promised(code)) {
      const at = printed.indexOf(line, from);
      expect({ line, found: at !== -1 }).toEqual({ line, found: true });
      from = at + 1;
    }
  });
});
