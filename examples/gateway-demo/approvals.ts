// The demo's approval scenes: a call paused for a person, approved through each route its client
// supports — on MCP 2026-07-28 an input-required answer (a URL elicitation to the check-in's inbox
// page, or a form showing every argument) and the retry with its requestState; for a client that
// can ask nobody, in the inbox while the call is held, after the hold as a single-use grant for the
// identical retry, and as a standing grant that answers later calls within its bounds. The approver
// acts through the inbox's JSON API, as a script or a bot would.

import { join } from 'node:path';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernTransport,
  type ClientCapabilities,
} from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

export interface ApprovalScenes {
  readonly gatewayUrl: string;
  readonly inboxUrl: string;
  readonly approverToken: string;
  /** The bot's token, for its 2026-07-28 clients. */
  readonly botToken: string;
  readonly bot: Client;
  readonly print: (line: string) => void;
  readonly dataDir: string;
  readonly step: (title: string, call: () => Promise<unknown>) => Promise<void>;
}

interface ListedCheckIn {
  readonly id: string;
  readonly argsSummary: string;
}

/** The inbox's JSON API with the approver's token. */
function inboxApi(scenes: ApprovalScenes) {
  return async (path: string, body?: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${scenes.inboxUrl}/api${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${scenes.approverToken}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return (await response.json()) as Record<string, unknown>;
  };
}

/** Waits (bounded) for the check-in whose arguments mention `marker`, and answers its id. */
async function checkInFor(scenes: ApprovalScenes, marker: string): Promise<string> {
  const api = inboxApi(scenes);
  for (let tries = 0; tries < 100; tries++) {
    const listed = (await api('/check-ins'))['checkIns'] as ListedCheckIn[];
    const found = listed.find((checkIn) => checkIn.argsSummary.includes(marker));
    if (found !== undefined) return found.id;
    await new Promise((done) => setTimeout(done, 20));
  }
  throw new Error(`no check-in for ${marker} appeared in the inbox`);
}

/** A 2026-07-28 client of the bot's with `capabilities`, answering the gateway's questions with `answer`. */
async function modernClient(
  scenes: ApprovalScenes,
  capabilities: ClientCapabilities,
  answer: (params: Record<string, unknown>) => Promise<Record<string, unknown>>,
): Promise<ModernClient> {
  const client = new ModernClient(
    { name: 'gateway-demo-2026', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  client.setRequestHandler('elicitation/create', async (request) => answer(request.params as never) as never);
  await client.connect(
    new ModernTransport(new URL(scenes.gatewayUrl), {
      requestInit: { headers: { authorization: `Bearer ${scenes.botToken}` } },
    }),
  );
  return client;
}

export async function approvalScenes(scenes: ApprovalScenes): Promise<void> {
  const api = inboxApi(scenes);
  const write = (file: string, content: string) => ({
    name: 'fs_write_file',
    arguments: { path: join(scenes.dataDir, file), content },
  });

  const opensUrls = await modernClient(scenes, { elicitation: { url: {} } }, async (params) => {
    const url = String(params['url']);
    scenes.print(`  client opens: ${url.replace(/\/check-ins\/.*/, '/check-ins/<id>')}`);
    // The person signs in there and approves; here the inbox's API does it with ana's token.
    await api(`/check-ins/${decodeURIComponent(url.slice(url.lastIndexOf('/') + 1))}/approve`, {
      note: 'approved on the inbox page',
    });
    return { action: 'accept' };
  });
  await scenes.step(
    'acme/support-bot on MCP 2026-07-28 (its client opens URLs) writes a file: the gateway answers with the inbox page; ana approves there; the retry runs once',
    () => opensUrls.callTool(write('url.txt', 'Approved on the inbox page.')),
  );
  await opensUrls.close();

  const showsForms = await modernClient(scenes, { elicitation: { form: {} } }, async (params) => {
    scenes.print(`  client shows a form: ${String(params['message']).split('\n')[0]}`);
    return { action: 'accept', content: { decision: 'approve', note: 'read every argument' } };
  });
  await scenes.step(
    'acme/support-bot on MCP 2026-07-28 (its client shows forms only) writes a file: the person approves in the form',
    () => showsForms.callTool(write('form.txt', 'Approved in the form.')),
  );
  await showsForms.close();

  await scenes.step('acme/support-bot writes a file; ana approves in the inbox during the hold', async () => {
    const call = scenes.bot.callTool(write('held.txt', 'Approved while held.'));
    await api(`/check-ins/${await checkInFor(scenes, 'held.txt')}/approve`, { note: 'checked' });
    return call;
  });

  await scenes.step('acme/support-bot writes a file nobody approves within the hold', () =>
    scenes.bot.callTool(write('later.txt', 'Approved after the hold.')),
  );
  await scenes.step(
    'ana approves it in the inbox; the identical retry runs once, on that grant',
    async () => {
      await api(`/check-ins/${await checkInFor(scenes, 'later.txt')}/approve`, {});
      return scenes.bot.callTool(write('later.txt', 'Approved after the hold.'));
    },
  );

  await scenes.step(
    'ana approves a write with a standing grant: this file, this content, 2 calls, 1 hour',
    async () => {
      const call = scenes.bot.callTool(write('standing.txt', 'Standing approval.'));
      const until = new Date(Date.now() + 3_600_000).toISOString();
      const id = await checkInFor(scenes, 'standing.txt');
      await api(`/check-ins/${id}/approve`, { grant: { uses: 2, until } });
      return call;
    },
  );
  await scenes.step('acme/support-bot writes it again: the standing grant answers, no one is asked', () =>
    scenes.bot.callTool(write('standing.txt', 'Standing approval.')),
  );
}
