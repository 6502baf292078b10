// A reload that weakens security is named as such: each way, one sentence.

import type { GatewayConfig } from '../src/config/types';
import { weakenings } from '../src/weakening';

const base: GatewayConfig = {
  upstreams: { crm: { command: ['node', 'crm.js'] }, files: { command: ['node', 'files.js'] } },
  policy: {
    rules: [
      { name: 'no-delete', tools: ['crm_delete*'], effect: 'deny' },
      { name: 'ask-export', tools: ['crm_export'], effect: 'ask' },
      { name: 'reads', tools: ['crm_get*'], effect: 'allow' },
    ],
    default: 'deny',
  },
  guards: { egress: { allowHosts: ['api.acme.example'] }, secrets: true, results: { mode: 'withhold' } },
  tenants: { acme: { upstreams: ['crm'], guards: { paths: true } } },
};

const change = (edit: (c: Record<string, unknown>) => void): GatewayConfig => {
  const copy = structuredClone(base) as unknown as Record<string, unknown>;
  edit(copy);
  return copy as unknown as GatewayConfig;
};
const rules = (c: Record<string, unknown>) => (c['policy'] as { rules: Record<string, unknown>[] }).rules;

describe('weakenings', () => {
  it('finds none in an unchanged or stricter configuration', () => {
    expect(weakenings(base, base)).toEqual([]);
    expect(
      weakenings(
        base,
        change((c) => (rules(c)[1]!['effect'] = 'deny')),
      ),
    ).toEqual([]);
    expect(
      weakenings(
        base,
        change((c) => ((c['tenants'] as Record<string, { upstreams: string[] }>)['acme']!.upstreams = [])),
      ),
    ).toEqual([]);
  });

  it.each([
    [
      'a deny rule removed',
      (c: Record<string, unknown>) => rules(c).splice(0, 1),
      /rule 'no-delete' \(deny\) removed/,
    ],
    [
      'a rule widened',
      (c: Record<string, unknown>) => (rules(c)[1]!['effect'] = 'allow'),
      /rule 'ask-export' widened from ask to allow/,
    ],
    [
      'a deny rule narrowed',
      (c: Record<string, unknown>) => (rules(c)[0]!['tools'] = ['crm_delete_one']),
      /rule 'no-delete' \(deny\) matches differently/,
    ],
    [
      'a rule in shadow mode',
      (c: Record<string, unknown>) => (rules(c)[0]!['mode'] = 'shadow'),
      /moved to shadow mode/,
    ],
    [
      'an allow rule added',
      (c: Record<string, unknown>) => rules(c).push({ name: 'all', tools: ['*'], effect: 'allow' }),
      /allow rule 'all' added/,
    ],
    [
      'the default widened',
      (c: Record<string, unknown>) => ((c['policy'] as Record<string, unknown>)['default'] = 'allow'),
      /default widened from deny to allow/,
    ],
    [
      'a guard turned off',
      (c: Record<string, unknown>) => ((c['guards'] as Record<string, unknown>)['secrets'] = false),
      /the secrets guard turned off/,
    ],
    [
      'the egress allow-list widened',
      (c: Record<string, unknown>) =>
        ((c['guards'] as Record<string, unknown>)['egress'] = {
          allowHosts: ['api.acme.example', '*.evil.example'],
        }),
      /egress allow-list widened/,
    ],
    [
      "a tenant's guard turned off",
      (c: Record<string, unknown>) =>
        ((c['tenants'] as Record<string, { guards: unknown }>)['acme']!.guards = {}),
      /tenant 'acme' guards: the paths guard turned off/,
    ],
    [
      'a tenant given an upstream',
      (c: Record<string, unknown>) =>
        (c['tenants'] as Record<string, { upstreams: string[] }>)['acme']!.upstreams.push('files'),
      /tenant 'acme' given upstream 'files'/,
    ],
    [
      'tools un-pinned',
      (c: Record<string, unknown>) => (c['pins'] = { newTools: 'allow' }),
      /no longer held for review/,
    ],
  ])('names %s', (_what, edit, sentence) => {
    const found = weakenings(base, change(edit));
    expect(found).toEqual([expect.stringMatching(sentence)]);
  });
});
