import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPolicy, PolicyLoadError } from '@toolgate/policy';

function loadError(text: string): PolicyLoadError {
  try {
    loadPolicy(text, { file: 'policy.yaml' });
  } catch (error) {
    if (error instanceof PolicyLoadError) return error;
    throw error;
  }
  throw new Error('expected loadPolicy to fail');
}

const GOOD = `# support desk policy
- name: interns-read-only
  when: "'intern' in identity.roles && !tool.annotations.readOnlyHint"
  effect: deny
  reason: interns may only use read-only tools
- name: big-refunds-ask
  tools: [issue_refund]
  when: args.amount > 1000.0
  effect: ask
`;

describe('loadPolicy', () => {
  test('loads rules from YAML as plain objects', () => {
    expect(loadPolicy(GOOD)).toEqual([
      {
        name: 'interns-read-only',
        when: "'intern' in identity.roles && !tool.annotations.readOnlyHint",
        effect: 'deny',
        reason: 'interns may only use read-only tools',
      },
      { name: 'big-refunds-ask', tools: ['issue_refund'], when: 'args.amount > 1000.0', effect: 'ask' },
    ]);
  });

  test('loads the same rules from JSON', () => {
    const json = JSON.stringify([
      { name: 'no-writes', tools: ['fs_write*'], effect: 'deny', reason: 'read-only tenant' },
    ]);
    expect(loadPolicy(json)).toEqual([
      { name: 'no-writes', tools: ['fs_write*'], effect: 'deny', reason: 'read-only tenant' },
    ]);
  });

  test('an empty document is an empty policy', () => {
    expect(loadPolicy('')).toEqual([]);
  });

  test('a YAML syntax error names line and column', () => {
    const error = loadError('- name: a\n  effect: deny\n  tools: [a, b\n');
    expect([error.line, error.column]).toEqual([4, 1]);
    expect(error.message).toBe(
      'policy.yaml:4:1: not valid YAML or JSON: Flow sequence in block collection must be sufficiently indented and end with a ].',
    );
  });

  test('a duplicate key names its line and column', () => {
    const error = loadError('- name: a\n  effect: deny\n  effect: allow\n');
    expect([error.line, error.column]).toEqual([3, 3]);
  });

  test('a wrong field value names the line and column of the value', () => {
    const error = loadError('- name: a\n  effect: deny\n- name: b\n  effect: block\n');
    expect(error.message).toBe(
      "policy.yaml:4:11: policy rule 'b': 'effect' must be allow, deny or ask; got string.",
    );
    expect([error.line, error.column]).toEqual([4, 11]);
  });

  test('an unknown key names its own position', () => {
    const error = loadError('- name: a\n  effect: deny\n  efect: deny\n');
    expect([error.line, error.column]).toEqual([3, 10]);
    expect(error.message).toContain("unknown key 'efect'");
  });

  test('a CEL syntax error points into the expression: plain and quoted scalars', () => {
    const plain = loadError('- name: a\n  effect: deny\n  when: args.amount >\n');
    expect(plain.message).toBe(
      "policy.yaml:3:22: policy rule 'a': its 'when' is not valid CEL at column 14: Unexpected token: EOF.",
    );
    const quoted = loadError('- name: a\n  effect: deny\n  when: "args.amount >"\n');
    expect([quoted.line, quoted.column]).toEqual([3, 23]);
  });

  test('a CEL error in a JSON policy names the line and column too', () => {
    const error = loadError('[\n  {"name": "a", "effect": "deny",\n   "when": "1 +"}\n]');
    expect(error.line).toBe(3);
    expect(error.message).toContain("policy rule 'a': its 'when' is not valid CEL");
  });

  test('a document that is not a list is refused at its start', () => {
    const error = loadError('name: a\neffect: deny\n');
    expect(error.message).toBe('policy.yaml:1:1: a policy is a list of rules (- name: …, effect: …).');
  });

  test('an alias bomb is refused, not expanded', () => {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 0; i < 8; i++)
      lines.push(
        `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
          .fill(`*${String.fromCharCode(97 + i)}`)
          .join(', ')}]`,
      );
    const text = `- name: bomb\n  effect: deny\n  reason: {${lines.map((l) => l.replace(': ', ': ')).join(', ')}}\n`;
    expect(() => loadPolicy(text)).toThrow('could not be read (too many aliases?)');
  });

  test('loads a file and names it in errors', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-policy-'));
    try {
      const good = join(dir, 'good.yaml');
      writeFileSync(good, GOOD);
      expect(await loadPolicy({ file: good })).toHaveLength(2);
      const bad = join(dir, 'bad.yaml');
      writeFileSync(bad, '- name: a\n  effect: nope\n');
      await expect(loadPolicy({ file: bad })).rejects.toThrow(`${bad}:2:11: policy rule 'a'`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
