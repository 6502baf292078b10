// Input-required answers through `toolgate gateway` (GATEWAY.md §6 item 1), with SDK v2 clients on
// revision 2026-07-28: a paused call is answered with a URL elicitation to the check-in's inbox page
// or a form showing every argument, and a signed requestState; the retry runs the call once after an
// approval, asks again while nobody decided, gives the reason after a decline; an edited, replayed,
// foreign or mismatched state is CHECKIN_STATE_INVALID and the tool never runs.

import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
  type ClientCapabilities,
} from '@modelcontextprotocol/client';
import { fixtureServer, gatewayPerSuite, textOf, type TempDir } from './helpers';

const TOKENS = {
  BOT_TOKEN: 'bot-token-0123456789abcdef-0123456789abc',
  EVE_TOKEN: 'eve-token-0123456789abcdef-0123456789abc',
  ANA_TOKEN: 'ana-approver-token-0123456789-0123456789',
};
const MODERN = '2026-07-28';

function config(dir: TempDir, ttl = '10m'): string {
  return `auth:
  tokens:
    - { token: "\${env:BOT_TOKEN}", identity: { tenant: acme, principal: support-bot } }
    - { token: "\${env:EVE_TOKEN}", identity: { tenant: acme, principal: eve } }
    - { token: "\${env:ANA_TOKEN}", identity: { tenant: acme, principal: ana, roles: [approver] } }
checkIns: { key: "\${env:TOOLGATE_CHECKIN_KEY}", hold: 200ms, ttl: ${ttl} }
upstreams:
  shop:
    command: [node, ${JSON.stringify(fixtureServer)}]
    env: { RUN_LOG: ${JSON.stringify(`${dir.path}/runs.log`)} }
    prefix: shop_
policy:
  rules:
    - { name: big-refunds-ask, tools: [shop_refund], when: "args.amount > 100.0", effect: ask, reason: refunds over 100 need a supervisor }
  default: allow
tenants:
  acme: { upstreams: [shop] }
`;
}

interface Asked {
  resultType?: string;
  requestState?: string;
  inputRequests?: Record<string, { method: string; params: Record<string, unknown> }>;
}

type ElicitAnswer = {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, string | number | boolean>;
};

const refusalOf = (result: unknown) =>
  (result as { _meta?: Record<string, unknown> })._meta?.['io.toolgate/refusal'] as
    { gate: string; code: string; retryable: boolean } | undefined;

describe('input-required answers to 2026-07-28 clients through toolgate gateway', () => {
  const suite = gatewayPerSuite(config, TOKENS);
  let inbox: string;
  beforeAll(() => {
    inbox = new URL('/inbox', suite.gateway.url).href;
  });

  const refunds = () => suite.dir.runs().filter((tool) => tool === 'refund').length;

  const inboxApi = async (path: string, body?: unknown) => {
    const response = await fetch(`${inbox}/api/check-ins${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${TOKENS.ANA_TOKEN}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  };

  /** A client that answers elicitations with `answer`; `auto: false` hands input-required results back. */
  async function client(
    token: string,
    capabilities: ClientCapabilities,
    answer?: (params: Record<string, unknown>) => Promise<ElicitAnswer>,
    auto = true,
  ): Promise<V2Client> {
    const made = new V2Client(
      { name: 'input-required-test', version: '1.0.0' },
      {
        capabilities,
        versionNegotiation: { mode: { pin: MODERN } },
        ...(auto ? {} : { inputRequired: { autoFulfill: false } }),
      },
    );
    if (answer !== undefined)
      made.setRequestHandler('elicitation/create', async (request) => answer(request.params as never));
    await made.connect(
      new V2Transport(new URL(suite.gateway.url), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    return made;
  }

  /** One round by hand: the call, with a requestState and input responses when given. */
  const round = (
    made: V2Client,
    args: Record<string, unknown>,
    requestState?: string,
    inputResponses?: Record<string, unknown>,
  ) =>
    made.callTool(
      {
        name: 'shop_refund',
        arguments: args,
        ...(requestState !== undefined ? { requestState } : {}),
        ...(inputResponses !== undefined ? { inputResponses } : {}),
      } as never,
      { allowInputRequired: true },
    ) as Promise<Asked & { isError?: boolean; content?: unknown }>;

  const checkInIdOf = (url: string) => decodeURIComponent(url.slice(url.lastIndexOf('/') + 1));

  it('URL elicitation: the client opens the inbox page, the approver approves there, the retry runs once', async () => {
    const before = refunds();
    const opened: string[] = [];
    const bot = await client(TOKENS.BOT_TOKEN, { elicitation: { url: {} } }, async (params) => {
      const url = String(params['url']);
      opened.push(url);
      expect(params['mode']).toBe('url');
      expect((await inboxApi(`/${encodeURIComponent(checkInIdOf(url))}/approve`, {})).status).toBe(200);
      return { action: 'accept' };
    });
    try {
      const result = await bot.callTool({ name: 'shop_refund', arguments: { amount: 300, order: 'u-1' } });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toContain('u-1');
      expect(opened).toHaveLength(1);
      expect(opened[0]).toMatch(new RegExp(`^${new URL(suite.gateway.url).origin}/inbox/check-ins/[^/]+$`));
      expect(refunds()).toBe(before + 1);
      // The page is the check-in's own, with every argument.
      const shown = await inboxApi(`/${encodeURIComponent(checkInIdOf(opened[0]!))}`);
      expect(shown.json['checkIn']).toMatchObject({ args: { amount: 300, order: 'u-1' } });
    } finally {
      await bot.close();
    }
  });

  it('form elicitation: the person sees every argument and approves at the client; the call runs once', async () => {
    const before = refunds();
    const messages: string[] = [];
    const bot = await client(TOKENS.BOT_TOKEN, { elicitation: { form: {} } }, async (params) => {
      messages.push(String(params['message']));
      return { action: 'accept', content: { decision: 'approve', note: 'checked the order' } };
    });
    try {
      const result = await bot.callTool({ name: 'shop_refund', arguments: { amount: 250, order: 'f-1' } });
      expect(result.isError).toBeFalsy();
      expect(messages).toHaveLength(1);
      expect(messages[0]).toContain('amount: 250');
      expect(messages[0]).toContain('order: "f-1"');
      expect(refunds()).toBe(before + 1);
    } finally {
      await bot.close();
    }
  });

  it('a decline, at the form or in the inbox, answers the refusal with the reason and runs nothing', async () => {
    const before = refunds();
    const form = await client(TOKENS.BOT_TOKEN, { elicitation: { form: {} } }, async () => ({
      action: 'accept',
      content: { decision: 'decline', note: 'that order was refunded already' },
    }));
    const url = await client(TOKENS.BOT_TOKEN, { elicitation: { url: {} } }, async (params) => {
      const id = checkInIdOf(String(params['url']));
      await inboxApi(`/${encodeURIComponent(id)}/decline`, { reason: 'refund to the original card only' });
      return { action: 'accept' };
    });
    try {
      const atForm = await form.callTool({ name: 'shop_refund', arguments: { amount: 260, order: 'd-1' } });
      expect(atForm.isError).toBe(true);
      expect(textOf(atForm)).toContain('that order was refunded already');
      const inInbox = await url.callTool({ name: 'shop_refund', arguments: { amount: 270, order: 'd-2' } });
      expect(inInbox.isError).toBe(true);
      expect(textOf(inInbox)).toContain('refund to the original card only');
      expect(refunds()).toBe(before);
    } finally {
      await form.close();
      await url.close();
    }
  });

  it('asks again while undecided; a replayed, edited, foreign or mismatched state is CHECKIN_STATE_INVALID and nothing runs', async () => {
    const before = refunds();
    const args = { amount: 400, order: 's-1' };
    const bot = await client(TOKENS.BOT_TOKEN, { elicitation: { url: {} } }, undefined, false);
    const eve = await client(TOKENS.EVE_TOKEN, { elicitation: { url: {} } }, undefined, false);
    try {
      const first = await round(bot, args);
      expect(first.resultType).toBe('input_required');
      const firstState = first.requestState!;
      expect(typeof firstState).toBe('string');
      const url = String(first.inputRequests?.['approval']?.params['url']);
      const id = checkInIdOf(url);

      // Undecided: asked again, about the same check-in, with a new state.
      const again = await round(bot, args, firstState, { approval: { action: 'accept' } });
      expect(again.resultType).toBe('input_required');
      expect(again.inputRequests?.['approval']?.params['url']).toBe(url);
      const secondState = again.requestState!;
      expect(secondState).not.toBe(firstState);

      // Replayed.
      expect(refusalOf(await round(bot, args, firstState))?.code).toBe('CHECKIN_STATE_INVALID');
      // Edited: one character of the signed payload changed.
      const [version, payload, signature] = secondState.split('.') as [string, string, string];
      const flipped = payload.slice(0, 5) + (payload[5] === 'A' ? 'B' : 'A') + payload.slice(6);
      expect(refusalOf(await round(bot, args, `${version}.${flipped}.${signature}`))?.code).toBe(
        'CHECKIN_STATE_INVALID',
      );
      expect(refusalOf(await round(bot, args, 'not-a-state'))?.code).toBe('CHECKIN_STATE_INVALID');

      // Approved in the inbox; then another principal, and other arguments, try the state first.
      expect((await inboxApi(`/${encodeURIComponent(id)}/approve`, {})).status).toBe(200);
      expect(refusalOf(await round(eve, args, secondState))?.code).toBe('CHECKIN_STATE_INVALID');
      expect(refunds()).toBe(before);

      // A state is spent by its first use, so a fresh one is needed for each of the next two tries.
      const third = await round(bot, { ...args, amount: 401 });
      expect(third.resultType).toBe('input_required');
      const otherArgs = await round(bot, args, third.requestState!);
      expect(refusalOf(otherArgs)?.code).toBe('CHECKIN_STATE_INVALID');
      expect(refunds()).toBe(before);
    } finally {
      await bot.close();
      await eve.close();
    }
  });

  it('the retry after an inbox approval runs the call exactly once; its state replayed runs nothing', async () => {
    const before = refunds();
    const args = { amount: 500, order: 'r-1' };
    const bot = await client(TOKENS.BOT_TOKEN, { elicitation: { url: {} } }, undefined, false);
    try {
      const first = await round(bot, args);
      const id = checkInIdOf(String(first.inputRequests?.['approval']?.params['url']));
      expect((await inboxApi(`/${encodeURIComponent(id)}/approve`, {})).status).toBe(200);
      const ran = await round(bot, args, first.requestState!, { approval: { action: 'accept' } });
      expect(ran.isError).toBeFalsy();
      expect(textOf(ran)).toContain('r-1');
      expect(refunds()).toBe(before + 1);
      const replayed = await round(bot, args, first.requestState!, { approval: { action: 'accept' } });
      expect(refusalOf(replayed)?.code).toBe('CHECKIN_STATE_INVALID');
      expect(refunds()).toBe(before + 1);
      const logged = await suite.gateway.waitForLog(
        (line) => line['msg'] === 'call' && line['kind'] === 'input-required' && line['checkInId'] === id,
      );
      expect(JSON.stringify(logged)).not.toContain('r-1');
    } finally {
      await bot.close();
    }
  });

  it('two valid states for one approved check-in, retried at once, run the call once', async () => {
    const before = refunds();
    const args = { amount: 550, order: 'race-1' };
    const bot = await client(TOKENS.BOT_TOKEN, { elicitation: { url: {} } }, undefined, false);
    try {
      const first = await round(bot, args);
      // The model calls again without the state: the same check-in, asked about with a second state.
      const second = await round(bot, args);
      const urlOf = (asked: Asked) => String(asked.inputRequests?.['approval']?.params['url']);
      expect(urlOf(second)).toBe(urlOf(first));
      expect((await inboxApi(`/${encodeURIComponent(checkInIdOf(urlOf(first)))}/approve`, {})).status).toBe(
        200,
      );
      const answers = await Promise.all(
        [first, second].map((asked) =>
          round(bot, args, asked.requestState!, { approval: { action: 'accept' } }),
        ),
      );
      expect(answers.filter((answer) => answer.resultType === undefined && !answer.isError)).toHaveLength(1);
      expect(refunds()).toBe(before + 1);
    } finally {
      await bot.close();
    }
  });

  it('a 2026-07-28 client that declares no elicitation is held and answered CHECKIN_PENDING, as before', async () => {
    const before = refunds();
    const bot = await client(TOKENS.BOT_TOKEN, {});
    try {
      const result = await bot.callTool({ name: 'shop_refund', arguments: { amount: 600, order: 'h-1' } });
      expect(refusalOf(result)).toMatchObject({ code: 'CHECKIN_PENDING', retryable: true });
      expect(refunds()).toBe(before);
    } finally {
      await bot.close();
    }
  });
});

describe('an expired requestState', () => {
  const suite = gatewayPerSuite((dir) => config(dir, '1s'), TOKENS);

  it('is CHECKIN_STATE_INVALID once its check-in expired, and the tool never runs', async () => {
    const bot = new V2Client(
      { name: 'expired-state-test', version: '1.0.0' },
      {
        capabilities: { elicitation: { form: {} } },
        versionNegotiation: { mode: { pin: MODERN } },
        inputRequired: { autoFulfill: false },
      },
    );
    await bot.connect(
      new V2Transport(new URL(suite.gateway.url), {
        requestInit: { headers: { authorization: `Bearer ${TOKENS.BOT_TOKEN}` } },
      }),
    );
    const args = { amount: 700, order: 'e-1' };
    const call = (extra: Record<string, unknown> = {}) =>
      bot.callTool({ name: 'shop_refund', arguments: args, ...extra } as never, {
        allowInputRequired: true,
      }) as Promise<Asked>;
    try {
      const first = await call();
      expect(first.resultType).toBe('input_required');
      await new Promise((done) => setTimeout(done, 1200));
      const late = await call({
        requestState: first.requestState,
        inputResponses: { approval: { action: 'accept', content: { decision: 'approve' } } },
      });
      expect(refusalOf(late)?.code).toBe('CHECKIN_STATE_INVALID');
      expect(suite.dir.runs()).not.toContain('refund');
    } finally {
      await bot.close();
    }
  });
});
