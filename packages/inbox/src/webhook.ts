// Delivery of new check-ins to a chat: each new pending check-in is posted once as a Slack-compatible
// message (text + blocks) with signed, expiring approve / decline links. The message names the tool,
// its source and who asked, never an argument value: the link's page shows those in full.

import type { CheckInRecord, CheckInRequest } from '@toolgate/core';
import { mayDecide } from './approvers';
import { linkToken } from './links';
import type { InboxContext, InboxWebhook } from './options';
import { expired } from './records';

const MAX_ATTEMPTS = 3;
const REMEMBERED = 10_000;
/** Check-ins created this long before the inbox started are still posted (clock skew, a restart). */
const STARTUP_GRACE_MS = 60_000;

/** Slack's mrkdwn escaping, and no control characters. */
const mrkdwn = (text: string): string =>
  text
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001F\u007F-\u009F\u200B-\u200F\u202A-\u202E\u2066-\u2069\uFEFF]/g, ' ')
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;');

export interface SlackMessage {
  readonly text: string;
  readonly blocks: readonly unknown[];
}

export function slackMessage(
  request: CheckInRequest,
  links: { readonly approve: string; readonly decline: string; readonly page: string },
): SlackMessage {
  const tool = mrkdwn(request.toolName);
  const from = request.toolSource === undefined ? '' : ` from ${mrkdwn(request.toolSource)}`;
  const who = mrkdwn(request.identity?.principal ?? 'an unknown caller');
  const tenant = request.identity?.tenant === undefined ? '' : ` (${mrkdwn(request.identity.tenant)})`;
  const expires = Math.floor(Date.parse(request.expiresAt) / 1000);
  const text = `${who}${tenant} asks to run ${tool}${from}: it waits for approval until ${request.expiresAt}.`;
  return {
    text,
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `*${who}*${tenant} asks to run \`${tool}\`${from}.\n${mrkdwn(request.question)}\nExpires <!date^${expires}^{date_short_pretty} {time}|${request.expiresAt}>.`,
        },
      },
      {
        type: 'actions',
        elements: [
          {
            type: 'button',
            text: { type: 'plain_text', text: 'Review and approve' },
            style: 'primary',
            url: links.approve,
          },
          {
            type: 'button',
            text: { type: 'plain_text', text: 'Decline' },
            style: 'danger',
            url: links.decline,
          },
          { type: 'button', text: { type: 'plain_text', text: 'Open in the inbox' }, url: links.page },
        ],
      },
    ],
  };
}

export interface WebhookDelivery {
  /** Posts every new check-in not posted yet; answers how many were posted. */
  deliver(): Promise<number>;
  stop(): void;
}

export function webhookDelivery(inbox: InboxContext, webhook: InboxWebhook): WebhookDelivery {
  const startedAt = inbox.now() - STARTUP_GRACE_MS;
  const attempts = new Map<string, number>();
  const send = webhook.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const tenants = webhook.tenants ?? 'all';
  const scope = { id: 'webhook', tenants };
  let running: Promise<number> | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;

  const remember = (id: string, count: number) => {
    attempts.delete(id);
    attempts.set(id, count);
    if (attempts.size > REMEMBERED) attempts.delete(attempts.keys().next().value!);
  };

  async function linksFor(record: CheckInRecord) {
    const { request } = record;
    const expiresAt = Math.min(
      Date.parse(request.expiresAt),
      webhook.linkTtlMs === undefined ? Number.POSITIVE_INFINITY : inbox.now() + webhook.linkTtlMs,
    );
    const link = async (action: 'approve' | 'decline') =>
      `${webhook.publicUrl}/links/${await linkToken(inbox, { id: request.id, action, expiresAt })}`;
    return {
      approve: await link('approve'),
      decline: await link('decline'),
      page: `${webhook.publicUrl}/check-ins/${encodeURIComponent(request.id)}`,
    };
  }

  async function post(record: CheckInRecord): Promise<boolean> {
    const body = JSON.stringify(slackMessage(record.request, await linksFor(record)));
    try {
      const response = await send(webhook.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(webhook.headers ?? {}) },
        body,
      });
      await response.body?.cancel().catch(() => undefined);
      return response.ok;
    } catch {
      return false;
    }
  }

  async function deliverOnce(): Promise<number> {
    const filter = { state: 'pending' as const, decided: false, order: 'newest' as const, limit: 100 };
    const batches =
      tenants === 'all'
        ? [await inbox.checkIns.list(filter)]
        : await Promise.all(tenants.map((tenant) => inbox.checkIns.list({ ...filter, tenant })));
    let posted = 0;
    for (const record of batches.flat().reverse()) {
      const { request } = record;
      const tries = attempts.get(request.id) ?? 0;
      if (tries >= MAX_ATTEMPTS || expired(inbox, record) || Date.parse(request.createdAt) < startedAt)
        continue;
      if (!mayDecide(scope, request)) continue;
      const { signature, ...unsigned } = request;
      if (!(await inbox.keys.requests.verify(unsigned, signature).catch(() => false))) continue;
      if (await post(record)) {
        remember(request.id, MAX_ATTEMPTS);
        posted++;
      } else {
        remember(request.id, tries + 1);
      }
    }
    return posted;
  }

  const delivery: WebhookDelivery = {
    deliver() {
      // One delivery at a time, so a check-in is never posted twice by overlapping rounds.
      running ??= deliverOnce().finally(() => {
        running = undefined;
      });
      return running;
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
    },
  };
  const pollMs = webhook.pollMs ?? 2000;
  if (pollMs > 0) {
    timer = setInterval(() => {
      delivery.deliver().catch(() => undefined);
    }, pollMs);
    // On Node, the poller alone must not keep the process alive.
    (timer as { unref?: () => void }).unref?.();
  }
  return delivery;
}
