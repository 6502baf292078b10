// The sealed state an upstream's input-required answer is relayed under: it opens only for the
// caller, method, target, upstream and arguments it was sealed for, before it expires, under the key
// it was sealed with; an edit anywhere in it, or a state of another key, opens to nothing.

import { upstreamStates, type UpstreamStateBinding } from '../src/upstream-state';
import { canonicalChain } from '@toolgate/middleware';
import { mcpServe, McpServeConfigError } from '@toolgate/mcp';
import { mcpHeaderProblem } from '../src/imported';

const SECRET = 'a-check-in-key-of-at-least-32-bytes-0123456789';

const binding: UpstreamStateBinding = {
  identity: { tenant: 'acme', principal: 'alice' },
  method: 'tools/call',
  target: 'ref_book',
  upstream: 'ref',
  args: { room: 'A', nights: 2 },
};

describe('upstream states', () => {
  const states = upstreamStates(SECRET);

  it("opens to the upstream's own state and question keys, which the client cannot read", () => {
    const token = states.seal(binding, { requestState: 'UPSTREAM-SECRET-STATE', keys: ['user_name'] });
    expect(token.startsWith('u1.')).toBe(true);
    expect(Buffer.from(token.slice(3), 'base64url').toString('latin1')).not.toContain('UPSTREAM');
    expect(token).not.toContain('alice');
    expect(states.open(token, binding)).toEqual({
      ok: true,
      ask: { requestState: 'UPSTREAM-SECRET-STATE', keys: ['user_name'] },
    });
  });

  it('carries the upstream task it names, unreadable, and only under the same binding', () => {
    const token = states.seal(binding, { keys: ['name'], upstreamTask: 'up-task-7f3a' });
    expect(Buffer.from(token.slice(3), 'base64url').toString('latin1')).not.toContain('up-task');
    expect(states.open(token, binding)).toEqual({
      ok: true,
      ask: { keys: ['name'], upstreamTask: 'up-task-7f3a' },
    });
    expect(states.open(token, { ...binding, upstream: 'other' })).toEqual({ ok: false, problem: 'binding' });
    // A state sealed without a task opens without one: a direct answer's retry calls the tool again.
    expect(states.open(states.seal(binding, { keys: ['name'] }), binding)).toEqual({
      ok: true,
      ask: { keys: ['name'] },
    });
  });

  it('opens in another process given the same secret (scale-out), never under another secret', () => {
    const token = states.seal(binding, { keys: ['k'] });
    expect(upstreamStates(SECRET).open(token, binding).ok).toBe(true);
    expect(upstreamStates(`${SECRET}-other`).open(token, binding)).toEqual({ ok: false, problem: 'seal' });
    // Without a secret each instance has its own random key.
    const own = upstreamStates();
    expect(upstreamStates().open(own.seal(binding, { keys: [] }), binding).ok).toBe(false);
  });

  it.each([
    ['another principal', { identity: { tenant: 'acme', principal: 'mallory' } }],
    ['another tenant', { identity: { tenant: 'evil', principal: 'alice' } }],
    ['no identity', { identity: undefined }],
    ['another tool', { target: 'ref_cancel' }],
    ['another method', { method: 'prompts/get' }],
    ['another upstream', { upstream: 'other' }],
    ['other arguments', { args: { room: 'B', nights: 2 } }],
  ])('refuses a replay by %s', (_what, change) => {
    const token = states.seal(binding, { requestState: 's', keys: ['k'] });
    expect(states.open(token, { ...binding, ...change })).toEqual({ ok: false, problem: 'binding' });
  });

  it('refuses a state once it expired', () => {
    const now = Date.parse('2026-12-04T12:00:00Z');
    const short = upstreamStates(SECRET, 60_000);
    const token = short.seal(binding, { keys: [] }, now);
    expect(short.open(token, binding, now + 59_999).ok).toBe(true);
    expect(short.open(token, binding, now + 60_000)).toEqual({ ok: false, problem: 'expired' });
  });

  it('refuses every single-character edit, a suffix, a truncation and junk', () => {
    const token = states.seal(binding, { requestState: 'state', keys: ['user_name'] });
    const body = token.slice(3);
    // The last character may carry only padding bits, so it is left out.
    for (let i = 0; i < body.length - 1; i += 7) {
      const swapped = body[i] === 'A' ? 'B' : 'A';
      const edited = `u1.${body.slice(0, i)}${swapped}${body.slice(i + 1)}`;
      expect(states.open(edited, binding).ok).toBe(false);
    }
    expect(states.open(`${token}-TAMPERED`, binding).ok).toBe(false);
    expect(states.open(token.slice(0, -4), binding).ok).toBe(false);
    expect(states.open('u1.', binding).ok).toBe(false);
    expect(states.open(`u1.${'A'.repeat(70_000)}`, binding)).toEqual({ ok: false, problem: 'malformed' });
    expect(states.open('v1.abc.def', binding)).toEqual({ ok: false, problem: 'malformed' });
  });
});

describe('mcpServe({ requestStateKey })', () => {
  const chain = canonicalChain({ permissions: { check: () => ({ allow: true as const }) } });
  it.each([['short'], [''], [42], [Buffer.alloc(8)]])('refuses %p as a key, naming the option', (key) => {
    expect(() => mcpServe([], { name: 's', version: '1.0.0', chain, requestStateKey: key as never })).toThrow(
      McpServeConfigError,
    );
    expect(() => mcpServe([], { name: 's', version: '1.0.0', chain, requestStateKey: key as never })).toThrow(
      /'requestStateKey'/,
    );
  });
  it('takes a long enough string or bytes', () => {
    expect(() => mcpServe([], { name: 's', version: '1.0.0', chain, requestStateKey: SECRET })).not.toThrow();
    expect(() =>
      mcpServe([], { name: 's', version: '1.0.0', chain, requestStateKey: Buffer.alloc(32, 7) }),
    ).not.toThrow();
  });
});

describe('x-mcp-header declarations (SEP-2243)', () => {
  const tool = (properties: Record<string, unknown>) => ({ type: 'object', properties });

  it('accepts headers on string, integer and boolean arguments, nested through properties', () => {
    expect(
      mcpHeaderProblem(
        tool({
          region: { type: 'string', 'x-mcp-header': 'Region' },
          priority: { type: 'integer', 'x-mcp-header': 'Priority' },
          where: { type: 'object', properties: { debug: { type: 'boolean', 'x-mcp-header': 'Debug' } } },
          plain: { type: 'number' },
        }),
      ),
    ).toBeUndefined();
    expect(mcpHeaderProblem({ type: 'object' })).toBeUndefined();
  });

  it.each([
    ['empty', tool({ v: { type: 'string', 'x-mcp-header': '' } })],
    ['not a string', tool({ v: { type: 'string', 'x-mcp-header': 7 } })],
    ['on an object', tool({ v: { type: 'object', 'x-mcp-header': 'Data' } })],
    ['on an array', tool({ v: { type: 'array', items: { type: 'string' }, 'x-mcp-header': 'Items' } })],
    ['on null', tool({ v: { type: 'null', 'x-mcp-header': 'Nil' } })],
    ['on a number', tool({ v: { type: 'number', 'x-mcp-header': 'Score' } })],
    ['without a type', tool({ v: { 'x-mcp-header': 'Any' } })],
    [
      'twice, same case',
      tool({
        a: { type: 'string', 'x-mcp-header': 'Region' },
        b: { type: 'string', 'x-mcp-header': 'Region' },
      }),
    ],
    [
      'twice, other case',
      tool({
        a: { type: 'string', 'x-mcp-header': 'MyField' },
        b: { type: 'string', 'x-mcp-header': 'myfield' },
      }),
    ],
    ['with a space', tool({ v: { type: 'string', 'x-mcp-header': 'My Region' } })],
    ['with a colon', tool({ v: { type: 'string', 'x-mcp-header': 'Region:Primary' } })],
    ['non-ASCII', tool({ v: { type: 'string', 'x-mcp-header': 'Région' } })],
    ['with a control character', tool({ v: { type: 'string', 'x-mcp-header': 'Region\t1' } })],
    ['under items', tool({ v: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } } })],
    ['under anyOf', { type: 'object', anyOf: [tool({ v: { type: 'string', 'x-mcp-header': 'V' } })] }],
    ['under $defs', { type: 'object', $defs: { d: { type: 'string', 'x-mcp-header': 'D' } } }],
    ['on the root', { type: 'object', 'x-mcp-header': 'Root' }],
  ])('finds a header %s malformed', (_what, schema) => {
    expect(mcpHeaderProblem(schema)).toEqual(expect.stringContaining('x-mcp-header'));
  });
});
