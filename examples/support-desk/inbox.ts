// `pnpm demo --inbox`: the approval inbox on a local port. The refund's check-in waits there until a
// person decides in the browser (or a script through the JSON API); the demo then carries the
// decision out through the signed, single-use resume.

import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { ArtifactStore, CheckInStore } from '@toolgate/core';
import { inboxApp, staticApprovers } from '@toolgate/inbox';
import { html } from 'hono/html';

export interface DemoInbox {
  /** The list page, e.g. `http://127.0.0.1:53011/inbox/`. */
  readonly url: string;
  /** The supervisor's token: sign in with it, or send it as a bearer token to the JSON API. */
  readonly token: string;
  close(): Promise<void>;
}

/** The refund tool's own check-in screen (its `checkInComponent` is 'refund-approval'). */
const refundScreen = (_props: unknown, request: { review: Readonly<Record<string, unknown>> }) => {
  const { customerId, amount, reason } = request.review;
  return html`<p class="refund-approval">
    Refund <strong>${String(amount)} EUR</strong> to customer <code>${String(customerId)}</code>
    (${String(reason)}). The billing key is fetched only after you approve.
  </p>`;
};

export async function startInbox(options: {
  readonly checkIns: CheckInStore;
  readonly artifacts: ArtifactStore;
  readonly checkInKey: string;
  readonly port?: number;
}): Promise<DemoInbox> {
  const token = randomBytes(18).toString('base64url');
  const app = inboxApp({
    checkIns: options.checkIns,
    checkInKey: options.checkInKey,
    artifacts: options.artifacts,
    approvers: staticApprovers([{ token, id: 'supervisor', name: 'Supervisor', tenants: 'all' }]),
    components: { 'refund-approval': refundScreen },
    basePath: '/inbox',
    pollMs: 500,
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: options.port ?? 0 }, () => resolve(s));
    s.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/inbox/`,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        app.close();
        // Open event streams would hold the server; end them with it.
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
