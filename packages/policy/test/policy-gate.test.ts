import {
  checkInApproved,
  checkInDeclined,
  createChain,
  createDispatcher,
  listableTools,
} from '@toolgate/core';
import { canonicalChain, checkInGate, validateArgsGate } from '@toolgate/middleware';
import { policyGate, type PolicyRule } from '@toolgate/policy';
import {
  ana,
  countedTool,
  intern,
  KEY,
  lookup,
  paused,
  policyRow,
  refund,
  refused,
  result,
  setup,
} from './support';

const BIG_REFUND_ASK: PolicyRule = {
  name: 'big-refunds-ask',
  tools: ['issue_refund'],
  when: 'args.amount > 1000',
  effect: 'ask',
  reason: 'refunds over 1,000 need a supervisor',
};

describe('policyGate: first match decides', () => {
  test('the first rule whose tools and condition match decides, and later rules are not consulted', async () => {
    const tool = refund();
    const { dispatcher } = setup(
      [tool],
      [
        { name: 'small-ok', tools: ['issue_refund'], when: 'args.amount <= 100.0', effect: 'allow' },
        {
          name: 'no-refunds',
          tools: ['issue_*'],
          effect: 'deny',
          reason: 'refunds go through the billing team',
        },
      ],
    );
    const small = result(
      await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 50, order: 'o1' } }),
    );
    expect(policyRow(small)).toEqual({
      gate: 'policy',
      outcome: 'allow',
      why: "rule 'small-ok' allows",
      rule: 'small-ok',
      changed: false,
    });
    const big = refused(
      await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 500, order: 'o1' } }),
    );
    expect(big.gate).toBe('policy');
    expect(big.code).toBe('POLICY_DENIED');
    // The deciding rule travels as a field on the refusal's row, for audit and the gateway to read.
    expect(policyRow(big)).toMatchObject({ outcome: 'deny', rule: 'no-refunds' });
    expect(tool.runs).toBe(1);
  });

  test('order matters: the same rules reversed decide the other way', async () => {
    const tool = refund();
    const { dispatcher } = setup(
      [tool],
      [
        { name: 'no-refunds', tools: ['issue_*'], effect: 'deny' },
        { name: 'small-ok', tools: ['issue_refund'], when: 'args.amount <= 100.0', effect: 'allow' },
      ],
    );
    refused(await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 50, order: 'o1' } }));
    expect(tool.runs).toBe(0);
  });

  test('a rule scoped to other tools does not apply, and a glob matches by whole name', async () => {
    const tool = refund();
    const { dispatcher } = setup([tool], [{ name: 'no-issue', tools: ['issue'], effect: 'deny' }]);
    const outcome = result(
      await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 5, order: 'o' } }),
    );
    expect(policyRow(outcome)?.why).toBe('no policy rule applies to this tool');
  });
});

describe('policyGate: each effect', () => {
  test('deny refuses with the rule reason as the teaching text, never the argument value', async () => {
    const tool = refund();
    const { dispatcher, events } = setup(
      [tool],
      [
        {
          name: 'cap',
          tools: ['issue_refund'],
          when: 'args.amount > 700.0',
          effect: 'deny',
          reason: 'Offer a refund of 700 or less, or escalate to billing',
        },
      ],
    );
    const outcome = refused(
      await dispatcher.dispatch({
        toolName: 'issue_refund',
        args: { amount: 9876.5, order: 'secret-order-77' },
      }),
    );
    expect(outcome.content).toBe(
      "[policy refused: policy rule 'cap' does not allow 'issue_refund' with these arguments. Retrying with the same arguments will not help. Offer a refund of 700 or less, or escalate to billing.]",
    );
    expect(outcome.retryable).toBe(false);
    expect(policyRow(outcome)).toMatchObject({ gate: 'policy', outcome: 'deny' });
    expect(policyRow(outcome)?.why).toContain("policy rule 'cap'");
    const decided = events.filter((e) => e.type === 'policy.decided');
    expect(decided).toEqual([expect.objectContaining({ rule: 'cap', effect: 'deny', gate: 'policy' })]);
    const everything = JSON.stringify(events) + JSON.stringify(outcome);
    expect(everything).not.toContain('9876');
    expect(everything).not.toContain('secret-order-77');
    expect(tool.runs).toBe(0);
  });

  test('a deny that reads no args says retrying will not help at all', async () => {
    const { dispatcher } = setup(
      [lookup()],
      [{ name: 'no-interns', when: "'intern' in identity.roles", effect: 'deny' }],
    );
    const outcome = refused(
      await dispatcher.dispatch({ toolName: 'lookup_order', args: { order: 'o' } }, { identity: intern }),
    );
    expect(outcome.content).toBe(
      "[policy refused: policy rule 'no-interns' does not allow 'lookup_order' for this caller. Retrying will not help. Tell the user this action is not permitted.]",
    );
  });

  test('allow passes to the next gate and the ledger names the rule', async () => {
    const tool = lookup();
    const { dispatcher } = setup(
      [tool],
      [{ name: 'agents', when: "'agent' in identity.roles", effect: 'allow' }],
      { default: 'deny' },
    );
    const outcome = result(
      await dispatcher.dispatch({ toolName: 'lookup_order', args: { order: 'o' } }, { identity: ana }),
    );
    expect(policyRow(outcome)).toEqual({
      gate: 'policy',
      outcome: 'allow',
      why: "rule 'agents' allows",
      rule: 'agents',
      changed: false,
    });
    expect(outcome.ledger.map((r) => r.gate)).toEqual([
      'permission',
      'capabilities',
      'validate-args',
      'policy',
      'wants',
      'check-in',
      'credentials',
      'result-ceiling',
    ]);
    expect(tool.runs).toBe(1);
  });

  test('ask pauses at the check-in gate with the final args, and the approval runs the call once', async () => {
    const tool = refund();
    const { dispatcher, events } = setup([tool], [BIG_REFUND_ASK]);
    const args = { amount: 2500, order: 'o-9' };
    const first = paused(await dispatcher.dispatch({ toolName: 'issue_refund', args }, { identity: ana }));
    expect(first.checkIn.asker).toBe('check-in');
    expect(first.checkIn.review).toEqual(args);
    expect(first.checkIn.question).toBe(
      "Allow 'issue_refund' to run with the arguments shown? policy: rule 'big-refunds-ask': refunds over 1,000 need a supervisor",
    );
    expect(policyRow(first)).toEqual({
      gate: 'policy',
      outcome: 'allow',
      why: "rule 'big-refunds-ask' asks for a person",
      rule: 'big-refunds-ask',
      changed: false,
    });
    expect(events.filter((e) => e.type === 'policy.decided')).toEqual([
      expect.objectContaining({ rule: 'big-refunds-ask', effect: 'ask' }),
    ]);
    expect(tool.runs).toBe(0);

    const approval = checkInApproved({ by: 'sam' });
    const resumed = result(await dispatcher.resume(first.checkIn, approval));
    expect(resumed.receipts).toHaveLength(1);
    expect(tool.runs).toBe(1);
    // Single use: the same approval cannot run it again.
    refused(await dispatcher.resume(first.checkIn, approval));
    expect(tool.runs).toBe(1);
  });

  test('ask below the threshold does not pause a tool that declares no check-in', async () => {
    const tool = refund();
    const { dispatcher } = setup([tool], [BIG_REFUND_ASK]);
    const outcome = result(
      await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 20, order: 'o' } }),
    );
    expect(outcome.ledger.find((r) => r.gate === 'check-in')).toMatchObject({ outcome: 'allow' });
    expect(tool.runs).toBe(1);
  });

  test('a declined ask refuses with the approver reason', async () => {
    const tool = refund();
    const { dispatcher } = setup([tool], [BIG_REFUND_ASK]);
    const first = paused(
      await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 2500, order: 'o' } }),
    );
    const outcome = refused(
      await dispatcher.resume(first.checkIn, checkInDeclined({ by: 'sam', reason: 'too much' })),
    );
    expect(outcome.code).toBe('CHECKIN_DECLINED');
    expect(tool.runs).toBe(0);
  });

  test('an ask approval is bound to the args: a resume whose args would differ is refused', async () => {
    const tool = refund();
    const { dispatcher } = setup([tool], [BIG_REFUND_ASK]);
    const first = paused(
      await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 2500, order: 'o' } }),
    );
    const forged = { ...first.checkIn, args: { amount: 9999, order: 'o' } };
    const outcome = refused(await dispatcher.resume(forged, checkInApproved({ by: 'sam' })));
    expect(outcome.kind).toBe('refused');
    expect(tool.runs).toBe(0);
  });

  test('a tool whose checkIn predicate says no is still paused when the policy asks', async () => {
    const tool = countedTool({
      name: 'issue_refund',
      properties: { amount: { type: 'number' }, order: { type: 'string' } },
      checkIn: () => false,
    });
    const { dispatcher } = setup([tool], [BIG_REFUND_ASK]);
    paused(await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 2500, order: 'o' } }));
    expect(tool.runs).toBe(0);
  });

  test('a tool that declares checkIn and a policy ask pause once and one approval answers both', async () => {
    const tool = countedTool({
      name: 'issue_refund',
      properties: { amount: { type: 'number' }, order: { type: 'string' } },
      checkIn: 'always',
    });
    const { dispatcher } = setup([tool], [BIG_REFUND_ASK]);
    const first = paused(
      await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 2500, order: 'o' } }),
    );
    result(await dispatcher.resume(first.checkIn, checkInApproved({ by: 'sam' })));
    expect(tool.runs).toBe(1);
  });
});

describe('policyGate: the pause a policy asks for cannot be planned away', () => {
  test('the check-in gate stays in the onion of a tool that declares no checkIn when a rule may ask', async () => {
    const tool = refund();
    const { dispatcher } = setup([tool], [BIG_REFUND_ASK]);
    // Two calls: the plan is built on the first and reused on the second.
    paused(await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 2500, order: 'o' } }));
    paused(await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 2501, order: 'o' } }));
    expect(tool.runs).toBe(0);
  });

  test('a chain without a check-in gate refuses an asked-for call instead of running it', async () => {
    const tool = refund();
    const chain = createChain([validateArgsGate(), policyGate([BIG_REFUND_ASK])], { checkIns: { key: KEY } });
    const dispatcher = createDispatcher({ tools: [tool], chain });
    const outcome = refused(
      await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 2500, order: 'o' } }),
    );
    expect(outcome.gate).toBe('policy');
    expect(outcome.code).toBe('CHECKIN_NOT_ASKED');
    expect(tool.runs).toBe(0);
  });

  test('a chain that cannot pause fails at build when a rule asks', () => {
    expect(() =>
      createDispatcher({
        tools: [refund()],
        chain: canonicalChain({ policy: policyGate([BIG_REFUND_ASK]) }),
      }),
    ).toThrow(
      /issue_refund.*policy rule 'big-refunds-ask' asks for a person's approval, but the chain has no check-in key/,
    );
  });

  test('a replaced check-in gate that ignores requirements still cannot let the call run', async () => {
    const tool = refund();
    const ignoring = { ...checkInGate(), run: (_ctx: unknown, next: () => Promise<void>) => next() };
    const chain = canonicalChain({ checkInKey: KEY, policy: policyGate([BIG_REFUND_ASK]) }).replace(
      'check-in',
      ignoring,
    );
    const dispatcher = createDispatcher({ tools: [tool], chain });
    const outcome = refused(
      await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 2500, order: 'o' } }),
    );
    expect(outcome.code).toBe('CHECKIN_NOT_ASKED');
    expect(tool.runs).toBe(0);
  });
});

describe('policyGate: shadow rules', () => {
  test('a shadow rule decides nothing and records what it would have done', async () => {
    const tool = refund();
    const { dispatcher, events } = setup(
      [tool],
      [
        {
          name: 'try-cap',
          tools: ['issue_refund'],
          when: 'args.amount > 100.0',
          effect: 'deny',
          mode: 'shadow',
        },
        { name: 'refunds-ok', tools: ['issue_refund'], effect: 'allow' },
      ],
    );
    const outcome = result(
      await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 500, order: 'o' } }),
    );
    expect(tool.runs).toBe(1);
    expect(policyRow(outcome)?.why).toBe("rule 'refunds-ok' allows; shadow rule 'try-cap' would deny");
    expect(events.filter((e) => e.type === 'policy.shadow')).toEqual([
      expect.objectContaining({ rule: 'try-cap', effect: 'deny' }),
    ]);
    const quiet = result(
      await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 50, order: 'o' } }),
    );
    expect(policyRow(quiet)?.why).toBe("rule 'refunds-ok' allows");
  });

  test('a shadow ask does not pause', async () => {
    const tool = refund();
    const { dispatcher } = setup([tool], [{ ...BIG_REFUND_ASK, mode: 'shadow' }]);
    const outcome = result(
      await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 5000, order: 'o' } }),
    );
    expect(policyRow(outcome)?.why).toBe(
      "no rule matched; the default allows; shadow rule 'big-refunds-ask' would ask",
    );
    expect(tool.runs).toBe(1);
  });
});

describe('policyGate: the default', () => {
  test('default deny refuses a call no rule matches', async () => {
    const tool = refund();
    const { dispatcher, events } = setup(
      [tool],
      [{ name: 'small', tools: ['issue_refund'], when: 'args.amount < 10.0', effect: 'allow' }],
      { default: 'deny' },
    );
    const outcome = refused(
      await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 50, order: 'o' } }),
    );
    expect(outcome.content).toBe(
      "[policy refused: no policy rule allows 'issue_refund' for this caller. Retrying will not help. Tell the user this action is not permitted.]",
    );
    expect(events.find((e) => e.type === 'policy.decided')).toMatchObject({ effect: 'deny', default: true });
    // The default decided: no rule is named, not even one the sentence quotes.
    expect(policyRow(outcome)).not.toHaveProperty('rule');
    expect(tool.runs).toBe(0);
  });

  test('default deny also refuses tools no rule applies to', async () => {
    const tool = lookup();
    const { dispatcher } = setup([tool], [], { default: 'deny' });
    refused(await dispatcher.dispatch({ toolName: 'lookup_order', args: { order: 'o' } }));
    expect(tool.runs).toBe(0);
  });

  test('default allow passes a tool no rule applies to', async () => {
    const tool = lookup();
    const { dispatcher } = setup([tool], []);
    result(await dispatcher.dispatch({ toolName: 'lookup_order', args: { order: 'o' } }));
    expect(tool.runs).toBe(1);
  });

  test('default ask pauses a call no rule matches, even on a tool no rule applies to', async () => {
    const tool = lookup();
    const { dispatcher } = setup([tool], [], { default: 'ask' });
    const first = paused(await dispatcher.dispatch({ toolName: 'lookup_order', args: { order: 'o' } }));
    expect(first.checkIn.question).toContain('policy: no policy rule allows this call without a person');
    result(await dispatcher.resume(first.checkIn, checkInApproved({ by: 'sam' })));
    expect(tool.runs).toBe(1);
    expect(() =>
      createDispatcher({
        tools: [lookup()],
        chain: canonicalChain({ policy: policyGate([], { default: 'ask' }) }),
      }),
    ).toThrow(/the policy default asks for a person's approval, but the chain has no check-in key/);
  });

  test('a bad default fails when the gate is built', () => {
    expect(() => policyGate([], { default: 'maybe' as never })).toThrow(
      /options.default must be allow, deny or ask/,
    );
  });
});

describe('policyGate: evaluation errors fail closed', () => {
  const optionalAmount = () =>
    countedTool({
      name: 'issue_refund',
      properties: { amount: { type: 'number' }, order: { type: 'string' } },
    });

  test('a deny rule whose condition errors (absent optional arg) counts as matched', async () => {
    const tool = optionalAmount();
    const { dispatcher, events } = setup(
      [tool],
      [{ name: 'cap', tools: ['issue_refund'], when: 'args.amount > 10.0', effect: 'deny' }],
    );
    const outcome = refused(await dispatcher.dispatch({ toolName: 'issue_refund', args: { order: 'o' } }));
    expect(outcome.content).toContain(
      "policy rule 'cap' could not be checked for this call of 'issue_refund', so it refuses it",
    );
    expect(events.find((e) => e.type === 'policy.decided')).toMatchObject({
      rule: 'cap',
      evaluationFailed: true,
    });
    expect(tool.runs).toBe(0);
  });

  test('an ask rule whose condition errors asks', async () => {
    const tool = optionalAmount();
    const { dispatcher } = setup([tool], [{ ...BIG_REFUND_ASK }]);
    paused(await dispatcher.dispatch({ toolName: 'issue_refund', args: { order: 'o' } }));
  });

  test('an allow rule whose condition errors does not match, and the next rule decides', async () => {
    const tool = optionalAmount();
    const { dispatcher } = setup(
      [tool],
      [{ name: 'small-ok', tools: ['issue_refund'], when: 'args.amount < 10.0', effect: 'allow' }],
      { default: 'deny' },
    );
    refused(await dispatcher.dispatch({ toolName: 'issue_refund', args: { order: 'o' } }));
    const ok = result(
      await dispatcher.dispatch({ toolName: 'issue_refund', args: { order: 'o', amount: 3 } }),
    );
    expect(policyRow(ok)?.why).toBe("rule 'small-ok' allows");
  });

  test('a division by zero or a missing identity field fails closed the same way', async () => {
    const tool = optionalAmount();
    const { dispatcher } = setup(
      [tool],
      [{ name: 'ratio', tools: ['issue_refund'], when: '10 / 0 > 1', effect: 'deny' }],
    );
    refused(await dispatcher.dispatch({ toolName: 'issue_refund', args: { order: 'o' } }));
    const other = setup(
      [lookup()],
      [{ name: 'tenant-only', when: "identity.tenant != 'acme'", effect: 'deny' }],
    );
    refused(await other.dispatcher.dispatch({ toolName: 'lookup_order', args: { order: 'o' } }));
    result(
      await other.dispatcher.dispatch({ toolName: 'lookup_order', args: { order: 'o' } }, { identity: ana }),
    );
  });
});

describe('policyGate: what rules read', () => {
  test('tool annotations absent read as MCP defaults; roles absent read as none', async () => {
    const plain = countedTool({ name: 'plain_tool', properties: {} });
    const readOnly = lookup();
    const { dispatcher } = setup(
      [plain, readOnly],
      [
        {
          name: 'interns-read-only',
          when: "'intern' in identity.roles && !tool.annotations.readOnlyHint",
          effect: 'deny',
        },
      ],
    );
    refused(await dispatcher.dispatch({ toolName: 'plain_tool', args: {} }, { identity: intern }));
    result(
      await dispatcher.dispatch({ toolName: 'lookup_order', args: { order: 'o' } }, { identity: intern }),
    );
    result(await dispatcher.dispatch({ toolName: 'plain_tool', args: {} }, { identity: { tenant: 'acme' } }));
    result(await dispatcher.dispatch({ toolName: 'plain_tool', args: {} }));
  });

  test('integer args are CEL ints, numbers are doubles, and now is the dispatcher clock', async () => {
    const tool = refund();
    const { dispatcher, clock } = setup(
      [tool],
      [
        {
          name: 'many-items',
          tools: ['issue_refund'],
          when: 'has(args.items) && args.items % 2 == 1',
          effect: 'deny',
        },
        { name: 'after-hours', when: 'now.getHours("UTC") >= 22', effect: 'deny' },
      ],
    );
    refused(
      await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 1.5, order: 'o', items: 3 } }),
    );
    result(
      await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 1.5, order: 'o', items: 4 } }),
    );
    clock.advance(17 * 3_600_000);
    const late = refused(
      await dispatcher.dispatch({ toolName: 'issue_refund', args: { amount: 1.5, order: 'o', items: 4 } }),
    );
    expect(late.content).toContain("'after-hours'");
  });

  test('tool source and capabilities are readable; our own tools have source ""', async () => {
    const tool = countedTool({ name: 'pay', properties: {}, capabilities: ['payments'] });
    const { dispatcher } = setup(
      [tool],
      [
        {
          name: 'remote-payments',
          when: "tool.source != '' && 'payments' in tool.capabilities",
          effect: 'deny',
        },
        { name: 'own-payments', when: "tool.source == '' && 'payments' in tool.capabilities", effect: 'ask' },
      ],
    );
    paused(await dispatcher.dispatch({ toolName: 'pay', args: {} }));
  });
});

describe('policyGate: list-time hiding', () => {
  test('visibleTools leaves out tools a deny that reads no args refuses this identity', () => {
    const tools = [refund(), lookup(), countedTool({ name: 'admin_reset', properties: {} })];
    const gate = policyGate([
      {
        name: 'interns-read-only',
        when: "'intern' in identity.roles && !tool.annotations.readOnlyHint",
        effect: 'deny',
      },
      { name: 'admins-only', tools: ['admin_*'], when: "!('admin' in identity.roles)", effect: 'deny' },
      { name: 'big-refunds', tools: ['issue_refund'], when: 'args.amount > 10000.0', effect: 'deny' },
    ]);
    createDispatcher({ tools, chain: canonicalChain({ policy: gate }) });
    const names = (identity: Parameters<typeof gate.visibleTools>[0]) =>
      gate.visibleTools(identity).map((t) => t.schema.name);
    expect(names(intern)).toEqual(['lookup_order']);
    // A deny that reads args may not apply to every call: the tool stays listed.
    expect(names(ana)).toEqual(['issue_refund', 'lookup_order']);
    expect(names({ roles: ['admin'] })).toEqual(['issue_refund', 'lookup_order', 'admin_reset']);
  });

  test("in a chain, listableTools (what mcpServe lists) hides what the gate's visibleTools leaves out", () => {
    const tools = [refund(), lookup(), countedTool({ name: 'admin_reset', properties: {} })];
    const gate = policyGate([
      { name: 'admins-only', tools: ['admin_*'], when: "!('admin' in identity.roles)", effect: 'deny' },
    ]);
    const chain = canonicalChain({ policy: gate });
    createDispatcher({ tools, chain });
    const names = (identity: Parameters<typeof gate.visibleTools>[0]) =>
      listableTools(tools, chain, identity).map((t) => t.schema.name);
    expect(names(ana)).toEqual(['issue_refund', 'lookup_order']);
    expect(names({ roles: ['admin'] })).toEqual(['issue_refund', 'lookup_order', 'admin_reset']);
    expect(names({ roles: ['admin'] })).toEqual(
      gate.visibleTools({ roles: ['admin'] }, { tools }).map((t) => t.schema.name),
    );
  });

  test('an earlier allow keeps a tool listed; default deny hides what no rule allows', () => {
    const tools = [refund(), lookup()];
    const gate = policyGate(
      [
        { name: 'agents-lookup', tools: ['lookup_*'], when: "'agent' in identity.roles", effect: 'allow' },
        { name: 'small-refunds', tools: ['issue_refund'], when: 'args.amount < 50.0', effect: 'allow' },
      ],
      { default: 'deny' },
    );
    const names = (identity: Parameters<typeof gate.visibleTools>[0]) =>
      gate.visibleTools(identity, { tools }).map((t) => t.schema.name);
    expect(names(ana)).toEqual(['issue_refund', 'lookup_order']);
    expect(names(intern)).toEqual(['issue_refund']);
  });

  test('shadow denies never hide, and a deny whose condition errors hides (fail closed)', () => {
    const tools = [lookup()];
    const shadow = policyGate([{ name: 's', effect: 'deny', mode: 'shadow' }]);
    expect(shadow.visibleTools(intern, { tools })).toHaveLength(1);
    const erroring = policyGate([{ name: 'e', when: "identity.tenant == 'x'", effect: 'deny' }]);
    expect(erroring.visibleTools(undefined, { tools })).toHaveLength(0);
    expect(erroring.visibleTools({ tenant: 'acme' }, { tools })).toHaveLength(1);
  });
});

describe('policyGate: placement', () => {
  test('canonicalChain({ policy }) and chain.use() both put it right after validate-args', () => {
    const viaOption = canonicalChain({ policy: policyGate([]) }).names();
    const viaUse = canonicalChain().use(policyGate([])).names();
    const expected = [
      'permission',
      'capabilities',
      'validate-args',
      'policy',
      'wants',
      'check-in',
      'credentials',
      'result-ceiling',
    ];
    expect(viaOption).toEqual(expected);
    expect(viaUse).toEqual(expected);
  });

  test('the chain id changes when a rule changes', () => {
    const a = canonicalChain({ policy: policyGate([{ name: 'r', effect: 'deny', when: 'args.x > 1' }]) });
    const b = canonicalChain({ policy: policyGate([{ name: 'r', effect: 'deny', when: 'args.x > 2' }]) });
    expect(a.id).not.toBe(b.id);
  });
});
