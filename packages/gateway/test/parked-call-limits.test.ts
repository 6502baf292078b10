// `listen.maxParkedCalls` and `listen.parkedCallWait` in toolgate.yaml bound the calls of a 2025-era
// upstream held open for a 2026-07-28 client's retry: past the number, a question is declined to the
// upstream at once; past the wait, the held call is ended (its question declined, its call
// cancelled) and the client's late retry reaches nothing; /metrics counts the held calls. Values the
// gateway cannot honour are refused at load with the key named. Through a shutdown, the drain waits
// for a held call and lets its retry in.

import { retryTool } from '../../../test-support/modern-request';
import {
  askingUpstreamSuite,
  configIssues,
  fixtureServer,
  legacyAskingFixture,
  textOf,
  type AskedCall,
} from './helpers';

const answerOf = (name: string) => ({ elicitation: { action: 'accept', content: { name } } });

const base = `auth: { tokens: [{ token: t-0123456789abcdef0123456789abcdef, identity: { tenant: acme, principal: bot } }] }
upstreams: { shop: { command: [node, ${JSON.stringify(fixtureServer)}] } }
tenants: { acme: { upstreams: [shop] } }
`;

const issuesOf = (listen: string) => configIssues(`${base}listen: ${listen}\n`);

describe('listen.maxParkedCalls and listen.parkedCallWait', () => {
  const {
    suite,
    tokens: TOKENS,
    runs,
    ask,
    answerAs,
  } = askingUpstreamSuite({
    upstream: 'old',
    script: legacyAskingFixture,
    clientName: 'parked-limits-test',
    answerKey: 'elicitation',
    listen: '{ maxParkedCalls: 1, parkedCallWait: 1500ms }',
  });

  /** Waits (bounded) until the upstream's run log holds `line`. */
  async function untilRun(line: string): Promise<void> {
    for (let waited = 0; !runs().includes(line) && waited < 10_000; waited += 50)
      await new Promise((resolve) => setTimeout(resolve, 50));
  }

  /** `toolgate_parked_calls` as /metrics reports it now. */
  async function parkedGauge(): Promise<number> {
    const text = await (await fetch(new URL('/metrics', suite.gateway.url))).text();
    return Number(/^toolgate_parked_calls (\S+)$/m.exec(text)?.[1]);
  }

  it('holds one call; a second question meanwhile is declined to its upstream at once', async () => {
    expect(await parkedGauge()).toBe(0);
    const first = await ask(TOKENS.BOT_TOKEN, 'old_ask_name');
    expect(first.resultType).toBe('input_required');
    expect(await parkedGauge()).toBe(1);
    // The one place is taken: the next question is not parked but declined, and its call ends.
    const second = await ask(TOKENS.BOT_TOKEN, 'old_ask_name');
    expect(second.resultType).not.toBe('input_required');
    expect(textOf(second)).toBe('No name (decline)');
    // The held call still answers its caller's retry.
    const done = await answerAs(TOKENS.BOT_TOKEN, 'old_ask_name', 'Ana', first.requestState!);
    expect(textOf(done)).toBe('Hello, Ana!');
    expect(await parkedGauge()).toBe(0);
  }, 30_000);

  it('ends a held call nobody retries after the wait, and the late retry reaches nothing', async () => {
    const asked = await ask(TOKENS.BOT_TOKEN, 'old_ask_name');
    expect(asked.resultType).toBe('input_required');
    const before = runs().length;
    await untilRun('cancelled ask_name');
    expect(runs().slice(before)).toContain('cancelled ask_name');
    const late = await answerAs(TOKENS.BOT_TOKEN, 'old_ask_name', 'Late', asked.requestState!);
    expect(late.isError).toBe(true);
    expect(textOf(late)).toContain('is not waiting in this process');
    expect(runs()).not.toContain('answer ask_name accept Late');
  }, 30_000);

  it("refuses at load a wait past the requestState's life and a count below one, naming the key", () => {
    expect(issuesOf('{ parkedCallWait: 10m, maxParkedCalls: 5 }')).toEqual([]);
    expect(issuesOf('{ parkedCallWait: 11m }')).toContainEqual(
      expect.objectContaining({ line: 4, message: expect.stringMatching(/longer than the 10 minutes/) }),
    );
    expect(issuesOf('{ parkedCallWait: soon }')).toContainEqual(expect.objectContaining({ line: 4 }));
    expect(issuesOf('{ maxParkedCalls: 0 }')).toContainEqual(expect.objectContaining({ line: 4 }));
  });
});

describe('a held call through a shutdown', () => {
  const {
    suite,
    tokens: TOKENS,
    runs,
    client,
  } = askingUpstreamSuite({
    upstream: 'old',
    script: legacyAskingFixture,
    clientName: 'parked-drain-test',
    answerKey: 'elicitation',
    listen: '{ drain: 20s }',
  });

  it('is waited for by the drain: its retry finishes it, a new call is turned away, the process exits 0', async () => {
    // Clients connected before the shutdown, as a running agent's are; a new one is sent elsewhere (503).
    const bot = await client(TOKENS.BOT_TOKEN, false);
    const other = await client(TOKENS.BOT_TOKEN, false);
    try {
      const asked = (await bot.callTool(
        { name: 'old_ask_name', arguments: {} },
        { allowInputRequired: true },
      )) as unknown as AskedCall;
      expect(asked.resultType).toBe('input_required');
      suite.gateway.child.kill('SIGTERM');
      const draining = await suite.gateway.waitForLog((line) => line['msg'] === 'shutdown.draining', 10_000);
      expect(draining['inFlight']).toBe(1);
      // A balancer reading /readyz sends new work elsewhere now.
      const ready = await fetch(new URL('/readyz', suite.gateway.url));
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ ready: false, draining: true });
      // A new session dressed as a tools/call by its headers does not get in, whatever version it claims.
      for (const version of [undefined, '2025-11-25', '2026-07-28']) {
        const initialize = await fetch(suite.gateway.url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${TOKENS.BOT_TOKEN}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-method': 'tools/call',
            ...(version !== undefined ? { 'mcp-protocol-version': version } : {}),
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: {
              protocolVersion: '2025-11-25',
              capabilities: {},
              clientInfo: { name: 'sneak', version: '1' },
            },
          }),
        });
        await initialize.body?.cancel();
        expect(initialize.headers.get('mcp-session-id')).toBeNull();
        expect(initialize.status).toBeGreaterThanOrEqual(400);
      }
      const turnedAway = await other.callTool(
        { name: 'old_ask_name', arguments: {} },
        { allowInputRequired: true },
      );
      expect(turnedAway.isError).toBe(true);
      expect(textOf(turnedAway)).toContain('the gateway is shutting down');
      const done = await retryTool(bot, 'old_ask_name', answerOf('Late Ana'), asked.requestState);
      expect(textOf(done)).toBe('Hello, Late Ana!');
      expect(await suite.gateway.exited).toBe(0);
      expect(runs().filter((line) => line.startsWith('start ask_name'))).toHaveLength(1);
    } finally {
      await bot.close().catch(() => undefined);
      await other.close().catch(() => undefined);
    }
  }, 30_000);
});
