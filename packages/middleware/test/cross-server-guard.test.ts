import {
  checkInApproved,
  createDispatcher,
  defineTool,
  DispatcherConfigError,
  type Identity,
  type Tool,
} from '@toolgate/core';
import { canonicalChain, crossServerGuard, type CrossServerGuardOptions } from '@toolgate/middleware';
import { keyedDigest, sipHash24 } from '../src/internal/keyed-digest';
import { eventsOf, expectPaused, expectRefused, expectResult, KEY, recordEvents } from './fixtures';

const OPEN = { type: 'object', properties: { text: { type: 'string' }, to: { type: 'string' } } };

/** A tool as an MCP client imports it (stamped with its server's name), recording the args it ran with. */
function serverTool(source: string | undefined, name: string, result: unknown = 'ok') {
  const runs: Record<string, unknown>[] = [];
  const tool = defineTool({
    name,
    description: `a tool of ${source ?? 'our own'}`,
    inputSchema: OPEN,
    execute: async (args: Record<string, unknown>) => {
      runs.push(args);
      return typeof result === 'function' ? (result as (a: unknown) => unknown)(args) : result;
    },
  }) as Tool;
  return { tool: source === undefined ? tool : { ...tool, source }, runs };
}

const IBAN = 'DE89370400440532013000';
const PAGE = `Pay the invoice to IBAN ${IBAN}, reference INV-2031-0042, by Friday.`;

function setup(options: CrossServerGuardOptions = {}, withKey = false) {
  const web = serverTool('web', 'web_fetch', PAGE);
  const bank = serverTool('bank', 'bank_transfer', { status: 'sent' });
  const ownMail = serverTool(undefined, 'send_mail');
  const webSearch = serverTool('web', 'web_search', 'results');
  const dispatcher = createDispatcher({
    tools: [web.tool, bank.tool, ownMail.tool, webSearch.tool],
    chain: canonicalChain({
      guards: { crossServer: options },
      ...(withKey ? { checkInKey: KEY } : {}),
    }),
  });
  const events = recordEvents(dispatcher, ['cross-server.flow', 'cross-server.unread']);
  const alice: Identity = { tenant: 'acme', principal: 'ana', conversation: 'c1' };
  const call = (toolName: string, args: Record<string, unknown>, identity: Identity = alice) =>
    dispatcher.dispatch({ toolName, args }, { identity });
  return { dispatcher, call, events, web, bank, ownMail, webSearch, alice };
}

describe('cross-server guard: the confused deputy', () => {
  it('refuses a value one server returned when the model passes it to another server, and the tool never runs', async () => {
    const { call, bank, events } = setup();
    expectResult(await call('web_fetch', { text: 'https://invoices.example/42' }));

    const outcome = expectRefused(await call('bank_transfer', { to: IBAN, text: 'invoice' }));

    expect(bank.runs).toHaveLength(0);
    expect(outcome).toMatchObject({ gate: 'cross-server-guard', code: 'CROSS_SERVER_FLOW', ran: false });
    expect(outcome.content).toBe(
      "[cross-server-guard refused: 'bank_transfer' argument 'to' carries a value returned by MCP server 'web', and values may not pass from one server to MCP server 'bank' here. " +
        'Retrying with the same value will not help. Ask the user to confirm the value and give it to you themselves.]',
    );
    expect(eventsOf(events, 'cross-server.flow')).toEqual([
      expect.objectContaining({ arg: 'to', from: 'web', action: 'refuse' }),
    ]);
    expect(JSON.stringify(outcome)).not.toContain(IBAN);
    expect(JSON.stringify(events)).not.toContain(IBAN);
  });

  it('finds the value as a token inside a longer argument, with its trailing punctuation removed', async () => {
    const { call, bank } = setup();
    await call('web_fetch', { text: 'x' });
    const outcome = expectRefused(await call('bank_transfer', { text: `please send 500 EUR to ${IBAN}.` }));
    expect(outcome.code).toBe('CROSS_SERVER_FLOW');
    expect(bank.runs).toHaveLength(0);
  });

  it('refuses the flow into our own tools by default, and lets them through with ownTools: false', async () => {
    const strict = setup();
    await strict.call('web_fetch', { text: 'x' });
    expect(expectRefused(await strict.call('send_mail', { to: IBAN })).reason).toContain(
      'to one of our own tools',
    );

    const loose = setup({ ownTools: false });
    await loose.call('web_fetch', { text: 'x' });
    const outcome = expectResult(await loose.call('send_mail', { to: IBAN }));
    expect(loose.ownMail.runs).toEqual([{ to: IBAN }]);
    expect(outcome.ledger.find((row) => row.gate === 'cross-server-guard')?.why).toBe('not an MCP tool');
  });

  it('lets a value the user typed through, and the same server use its own values', async () => {
    const { call, bank, webSearch } = setup();
    await call('web_fetch', { text: 'x' });

    expectResult(await call('bank_transfer', { to: 'FR7630006000011234567890189', text: 'rent' }));
    expectResult(await call('web_search', { text: `INV-2031-0042 ${IBAN}` }));

    expect(bank.runs).toHaveLength(1);
    expect(webSearch.runs).toHaveLength(1);
  });

  it('ignores short and word-like tokens, so ordinary words shared by two servers pass', async () => {
    const { call, bank } = setup();
    await call('web_fetch', { text: 'x' });
    expectResult(await call('bank_transfer', { text: 'Pay the invoice by Friday' }));
    expect(bank.runs).toHaveLength(1);
  });

  it('remembers per conversation: another conversation, principal or tenant may pass the same value', async () => {
    const { call, bank, alice } = setup();
    await call('web_fetch', { text: 'x' });

    for (const identity of [
      { ...alice, conversation: 'c2' },
      { ...alice, principal: 'bo' },
      { ...alice, tenant: 'globex' },
    ])
      expectResult(await call('bank_transfer', { to: IBAN }, identity));

    expect(bank.runs).toHaveLength(3);
    expectRefused(await call('bank_transfer', { to: IBAN }));
  });

  it('lets an allowed flow through, and only that one', async () => {
    const { call, bank, ownMail } = setup({ allowFlows: [{ from: 'web', to: 'bank' }] });
    await call('web_fetch', { text: 'x' });
    expectResult(await call('bank_transfer', { to: IBAN }));
    expectRefused(await call('send_mail', { to: IBAN }));
    expect(bank.runs).toHaveLength(1);
    expect(ownMail.runs).toHaveLength(0);
  });

  it('finds values in structured results, numbers included, and in nested args', async () => {
    const web = serverTool('web', 'web_fetch', { accounts: [{ number: 4_111_222_333, owner: 'Ann' }] });
    const bank = serverTool('bank', 'bank_transfer');
    const dispatcher = createDispatcher({
      tools: [web.tool, bank.tool],
      chain: canonicalChain({ guards: { crossServer: {} } }),
    });
    await dispatcher.dispatch({ toolName: 'web_fetch', args: {} });
    const nested = {
      toolName: 'bank_transfer',
      args: { text: 'x', to: '4111222333' },
    };
    const outcome = expectRefused(await dispatcher.dispatch(nested));
    expect(outcome.reason).toContain("argument 'to'");
    expect(bank.runs).toHaveLength(0);
  });

  it('forgets the oldest values past perConversation', async () => {
    let n = 0;
    const web = serverTool('web', 'web_fetch', () => `order ORD-${String(++n).padStart(8, '0')}`);
    const bank = serverTool('bank', 'bank_transfer');
    const dispatcher = createDispatcher({
      tools: [web.tool, bank.tool],
      chain: canonicalChain({ guards: { crossServer: { perConversation: 2 } } }),
    });
    for (let i = 0; i < 3; i++) await dispatcher.dispatch({ toolName: 'web_fetch', args: {} });
    // Each result leaves two values (the whole text and the order token): only the last result's remain.
    expectResult(await dispatcher.dispatch({ toolName: 'bank_transfer', args: { to: 'ORD-00000001' } }));
    expectRefused(await dispatcher.dispatch({ toolName: 'bank_transfer', args: { to: 'ORD-00000003' } }));
  });
});

describe("cross-server guard: action 'ask'", () => {
  it('pauses the call for a person, who approves the final args, and the tool runs once', async () => {
    const { dispatcher, call, bank } = setup({ action: 'ask' }, true);
    await call('web_fetch', { text: 'x' });

    const paused = expectPaused(await call('bank_transfer', { to: IBAN }));
    expect(bank.runs).toHaveLength(0);
    expect(paused.checkIn.question).toContain("argument 'to' carries a value returned by MCP server 'web'");

    const resumed = await dispatcher.resume(paused.checkIn, checkInApproved({ by: 'ana' }));
    expectResult(resumed);
    expect(bank.runs).toEqual([{ to: IBAN }]);
  });

  it('fails at build without a check-in key, naming the fix', () => {
    const bank = serverTool('bank', 'bank_transfer');
    expect(() =>
      createDispatcher({
        tools: [bank.tool],
        chain: canonicalChain({ guards: { crossServer: { action: 'ask' } } }),
      }),
    ).toThrow(DispatcherConfigError);
  });
});

describe('cross-server guard: options and memory', () => {
  it('refuses options it cannot honor when it is built', () => {
    expect(() => crossServerGuard({ action: 'warn' as never })).toThrow(/action must be/);
    expect(() => crossServerGuard({ minLength: 0 })).toThrow(/minLength must be a positive integer/);
    expect(() => crossServerGuard({ allowFlows: [{ from: '', to: 'x' }] })).toThrow(/allowFlows/);
  });

  it('holds digests under a per-guard key, never the values: SipHash-2-4 matches the reference vector', () => {
    const key = Uint8Array.from({ length: 16 }, (_, i) => i);
    const message = Uint8Array.from({ length: 15 }, (_, i) => i);
    const [hi, lo] = sipHash24(key, message);
    expect(hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0')).toBe('a129ca6149be45e5');
    expect(
      sipHash24(key, new Uint8Array(0))
        .map((h) => h.toString(16).padStart(8, '0'))
        .join(''),
    ).toBe('726fdb47dd0e0e31');
    const other = Uint8Array.from({ length: 16 }, (_, i) => 15 - i);
    expect(keyedDigest(key, IBAN)).not.toBe(keyedDigest(other, IBAN));
    expect(keyedDigest(key, IBAN)).toBe(keyedDigest(key, IBAN));
  });

  it("remembers nothing of a call that failed, and nothing of our own tools' results", async () => {
    const web = serverTool('web', 'web_fetch', () => {
      throw new Error(`no invoice for ${IBAN}`);
    });
    const own = serverTool(undefined, 'own_lookup', PAGE);
    const bank = serverTool('bank', 'bank_transfer');
    const dispatcher = createDispatcher({
      tools: [web.tool, own.tool, bank.tool],
      chain: canonicalChain({ guards: { crossServer: {} } }),
    });
    expect((await dispatcher.dispatch({ toolName: 'web_fetch', args: {} })).kind).toBe('failed');
    expectResult(await dispatcher.dispatch({ toolName: 'own_lookup', args: {} }));
    expectResult(await dispatcher.dispatch({ toolName: 'bank_transfer', args: { to: IBAN } }));
    expect(bank.runs).toHaveLength(1);
  });
});
