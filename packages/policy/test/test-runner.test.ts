import { PolicyConfigError, runPolicyTests, type PolicyRule } from '@toolgate/policy';
import { ana, intern, lookup, NOW, refund } from './support';

const RULES: PolicyRule[] = [
  {
    name: 'interns-read-only',
    when: "'intern' in identity.roles && !tool.annotations.readOnlyHint",
    effect: 'deny',
  },
  { name: 'big-refunds-ask', tools: ['issue_refund'], when: 'args.amount > 1000.0', effect: 'ask' },
  { name: 'night-shadow', when: 'now.getHours("UTC") < 6', effect: 'deny', mode: 'shadow' },
];

describe('runPolicyTests', () => {
  test('reports each case against the effect and the deciding rule', () => {
    const report = runPolicyTests(
      RULES,
      [
        {
          name: 'intern refund',
          identity: intern,
          tool: 'issue_refund',
          args: { amount: 5, order: 'o' },
          expect: 'deny',
          rule: 'interns-read-only',
        },
        {
          name: 'big refund',
          identity: ana,
          tool: 'issue_refund',
          args: { amount: 5000, order: 'o' },
          expect: 'ask',
        },
        {
          name: 'small refund',
          identity: ana,
          tool: 'issue_refund',
          args: { amount: 5, order: 'o' },
          expect: 'allow',
          rule: null,
        },
        {
          name: 'intern lookup',
          identity: intern,
          tool: 'lookup_order',
          args: { order: 'o' },
          expect: 'allow',
        },
      ],
      { tools: [refund(), lookup()], now: NOW },
    );
    expect(report).toMatchObject({ passed: 4, failed: 0 });
    expect(report.results[1]).toMatchObject({ passed: true, actual: 'ask', rule: 'big-refunds-ask' });
    // 05:06 UTC: the shadow rule would have decided the small refund.
    expect(report.results[2]!.shadows).toEqual(['night-shadow']);
  });

  test('a wrong expectation fails with one sentence saying what decided instead', () => {
    const report = runPolicyTests(
      RULES,
      [
        { identity: ana, tool: 'issue_refund', args: { amount: 5000, order: 'o' }, expect: 'allow' },
        {
          identity: intern,
          tool: 'issue_refund',
          args: { amount: 5, order: 'o' },
          expect: 'deny',
          rule: 'big-refunds-ask',
        },
      ],
      { tools: [refund()], now: NOW },
    );
    expect(report.failed).toBe(2);
    expect(report.results[0]!.problem).toBe("expected allow, got ask by rule 'big-refunds-ask'.");
    expect(report.results[1]!.problem).toBe(
      "expected deny by rule 'big-refunds-ask', got deny by rule 'interns-read-only'.",
    );
  });

  test('a tool named but not given is described by the case, and a tool description carries annotations', () => {
    const report = runPolicyTests(RULES, [
      { identity: intern, tool: 'fs_read', args: { path: '/a' }, expect: 'deny' },
      {
        identity: intern,
        tool: { name: 'fs_read', annotations: { readOnlyHint: true } },
        args: { path: '/a' },
        expect: 'allow',
        now: '2031-01-01T12:00:00Z',
      },
    ]);
    expect(report).toMatchObject({ passed: 2, failed: 0 });
  });

  test('a case whose tool the policy cannot serve fails with the build error; a bad case fails by name', () => {
    const report = runPolicyTests(
      [{ name: 'cap', tools: ['issue_refund'], when: 'args.amout > 1.0', effect: 'deny' }],
      [
        { tool: 'issue_refund', args: { amount: 1, order: 'o' }, expect: 'deny' },
        { tool: 'issue_refund', args: {}, expect: 'block' as never },
        { tool: 'x', expect: 'allow', now: 'yesterday' },
      ],
      { tools: [refund()] },
    );
    expect(report.failed).toBe(3);
    expect(report.results[0]!.problem).toContain(
      "policy rule 'cap' reads args.amout, which tool 'issue_refund' does not declare",
    );
    expect(report.results[1]!.problem).toBe("'expect' must be allow, deny or ask.");
    expect(report.results[2]!.problem).toContain("'now' must be ISO 8601");
  });

  test('the default takes part, and a broken policy throws', () => {
    const report = runPolicyTests([], [{ tool: 'anything', expect: 'deny', rule: null }], {
      default: 'deny',
    });
    expect(report.passed).toBe(1);
    expect(() => runPolicyTests([{ name: 'x', effect: 'deny', when: '1 +' }], [])).toThrow(PolicyConfigError);
  });
});
