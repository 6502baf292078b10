// CEL's matches() runs on RE2: linear in the input, so an argument a model wrote cannot stall a call
// with a pattern like `(a+)+$`; a literal pattern RE2 cannot run fails at chain build naming the rule,
// and one built from args at a call fails that evaluation closed.

import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { PolicyConfigError, policyGate } from '@toolgate/policy';
import { countedTool, policyRow, refused, result, setup } from './support';

const note = () =>
  countedTool({
    name: 'note',
    properties: { text: { type: 'string' }, pattern: { type: 'string' } },
    required: ['text'],
  });

describe('matches() on RE2', () => {
  it('keeps CEL semantics: a partial match unless anchored, RE2 syntax', async () => {
    const tool = note();
    const { dispatcher } = setup(
      [tool],
      [
        { name: 'ticket-ids', tools: ['note'], when: `args.text.matches("T-[0-9]{4}")`, effect: 'deny' },
        { name: 'anchored', tools: ['note'], when: `args.text.matches("^secret$")`, effect: 'deny' },
        {
          name: 'classes',
          tools: ['note'],
          when: `args.text.matches("\\\\d{3}\\\\s\\\\w+")`,
          effect: 'deny',
        },
      ],
    );
    const decide = async (text: string) => {
      const outcome = await dispatcher.dispatch({ toolName: 'note', args: { text } });
      return outcome.kind === 'refused' ? (policyRow(outcome)?.why ?? 'refused') : 'ran';
    };

    expect(await decide('see T-1234 please')).toMatch(/ticket-ids/);
    expect(await decide('T-12')).toBe('ran');
    expect(await decide('secret')).toMatch(/anchored/);
    expect(await decide('not secret here')).toBe('ran');
    expect(await decide('call 555 now')).toMatch(/classes/);
    expect(tool.runs).toBe(2);
  });

  it.each([
    ['a backreference', '(a)\\\\1', 'no-repeats'],
    ['a lookahead', 'a(?=b)', 'no-lookahead'],
  ])(
    'refuses %s in a literal pattern when the chain is built, naming the rule and column',
    (_, pattern, name) => {
      const build = () =>
        policyGate([
          {
            name,
            tools: ['note'],
            when: `size(args.text) > 3 && args.text.matches("${pattern}")`,
            effect: 'deny',
          },
        ]);

      expect(build).toThrow(PolicyConfigError);
      expect(build).toThrow(
        new RegExp(
          `^policy rule '${name}': its 'when' calls matches\\(\\) with a pattern RE2 cannot run at column 24: `,
        ),
      );
      expect(build).toThrow(/rewrite it without backreferences or lookarounds/);
    },
  );

  it('fails closed on a pattern from args RE2 cannot run: a deny rule counts as matched, an allow rule as not', async () => {
    const tool = note();
    const { dispatcher, events } = setup(
      [tool],
      [{ name: 'pattern-deny', tools: ['note'], when: `args.text.matches(args.pattern)`, effect: 'deny' }],
    );

    const outcome = await dispatcher.dispatch({
      toolName: 'note',
      args: { text: 'aa', pattern: '(a)\\1-SECRET-PATTERN' },
    });

    expect(refused(outcome).content).toMatch(/^\[policy refused: /);
    expect(tool.runs).toBe(0);
    expect(JSON.stringify({ outcome, events })).not.toContain('SECRET-PATTERN');
    const allowing = setup(
      [note()],
      [{ name: 'pattern-allow', tools: ['note'], when: `args.text.matches(args.pattern)`, effect: 'allow' }],
      { default: 'deny' },
    );
    const denied = await allowing.dispatcher.dispatch({
      toolName: 'note',
      args: { text: 'aa', pattern: 'a(?=a)' },
    });
    expect(denied.kind).toBe('refused');
    const allowed = await allowing.dispatcher.dispatch({
      toolName: 'note',
      args: { text: 'aa', pattern: 'a+' },
    });
    expect(result(allowed).ran).toBe(true);
  });
});

// A linear run over 100,000 characters takes well under a second plus the child's start; a
// backtracking engine on `(a+)+$` doubles its time with each 'a' and never finishes 100,000.
const ATTACK = join(__dirname, 'attack', 'matches-attack.ts');
const ROOT = join(__dirname, '..', '..', '..');
const FAR_BELOW_STALLED_MS = 8_000;
const CHILD_LIMIT_MS = 40_000;

describe('matches() under a CPU-bound attack', () => {
  it(
    '`(a+)+$` over 100,000 characters is decided at once',
    () => {
      const child = spawnSync(process.execPath, ['--import', 'tsx', ATTACK, '100000'], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: CHILD_LIMIT_MS,
      });
      if (child.signal !== null) throw new Error(`the attack was still running after ${CHILD_LIMIT_MS} ms`);
      expect(child.stderr).toBe('');
      const outcome = JSON.parse(child.stdout) as { ms: number; kind: string; content: string; runs: number };

      // The run of a ends in '!', so `(a+)+$` does not match and the note is taken.
      expect(outcome).toMatchObject({ kind: 'result', runs: 1 });
      expect(outcome.ms).toBeLessThan(FAR_BELOW_STALLED_MS);
    },
    CHILD_LIMIT_MS + 5_000,
  );
});
