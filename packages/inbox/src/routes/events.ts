// Server-sent events for an open list: the store is read every `pollMs`, and the page is told when
// what its approver may see changed (it then fetches the rendered list). A stream ends after a few
// minutes; the browser reconnects, which authenticates it again.

import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { InboxContext } from '../options';
import { visibleRecords } from '../records';
import { authenticate } from '../session';

const STREAM_MS = 5 * 60 * 1000;
const HEARTBEAT_MS = 15_000;

export function eventRoutes(inbox: InboxContext): Hono {
  const app = new Hono();
  app.get('/events', async (c) => {
    const session = await authenticate(inbox, c);
    if (session === undefined) return c.json({ error: 'unauthorized' }, 401);
    const { approver } = session;
    return streamSSE(c, async (stream) => {
      let aborted = false;
      stream.onAbort(() => {
        aborted = true;
      });
      const started = Date.now();
      let last: string | undefined;
      let beat = Date.now();
      while (!aborted && Date.now() - started < STREAM_MS) {
        try {
          const [pending, decided] = await Promise.all([
            visibleRecords(inbox, approver, false),
            visibleRecords(inbox, approver, true, 20),
          ]);
          const seen = [...pending, ...decided]
            .map((r) => `${r.request.id}:${r.state}:${r.decision === undefined ? 0 : 1}`)
            .join(',');
          if (seen !== last) {
            last = seen;
            await stream.writeSSE({ event: 'check-ins', data: String(pending.length), retry: 1000 });
            beat = Date.now();
          }
        } catch {
          // A store that fails this round is read again next round; the page keeps what it shows.
        }
        if (Date.now() - beat >= HEARTBEAT_MS) {
          await stream.writeSSE({ event: 'ping', data: '' });
          beat = Date.now();
        }
        await stream.sleep(inbox.pollMs);
      }
    });
  });
  return app;
}
