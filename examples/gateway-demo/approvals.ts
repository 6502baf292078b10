// The demo's approval scenes: a call paused for a person, approved through each route a client
// without elicitation has — in the inbox while the call is held, after the hold as a single-use
// grant for the identical retry, and as a standing grant that answers later calls within its
// bounds. The approver acts through the inbox's JSON API, as a script or a bot would.

import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

export interface ApprovalScenes {
  readonly inboxUrl: string;
  readonly approverToken: string;
  readonly bot: Client;
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

export async function approvalScenes(scenes: ApprovalScenes): Promise<void> {
  const api = inboxApi(scenes);
  const write = (file: string, content: string) => ({
    name: 'fs_write_file',
    arguments: { path: join(scenes.dataDir, file), content },
  });

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
