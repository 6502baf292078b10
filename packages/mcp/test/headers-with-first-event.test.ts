// An SSE answer's headers, flushed before its first event, wait for that event (a moment at most): a
// call answered soon leaves as one packet, headers, event and end; a stream with nothing to send yet
// still gets its headers promptly.

import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { headersWithFirstEvent } from '../src/headers-with-first-event';

const SSE = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
let server: Server | undefined;

/** Serves one response with `answer`, counting the socket writes it makes. */
async function serving(
  answer: (res: ServerResponse) => void,
): Promise<{ url: string; writes: () => number }> {
  let writes = 0;
  server = createServer((_req, res) => {
    const socket = res.socket as unknown as { _writeGeneric: (...args: unknown[]) => unknown };
    const original = socket._writeGeneric.bind(socket);
    socket._writeGeneric = (...args: unknown[]) => {
      writes += 1;
      return original(...args);
    };
    headersWithFirstEvent(res);
    answer(res);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, writes: () => writes };
}

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

describe('headersWithFirstEvent', () => {
  it('sends the headers with an event that comes soon, and its end, in one write', async () => {
    const { url, writes } = await serving((res) => {
      res.writeHead(200, SSE);
      res.flushHeaders();
      setTimeout(() => {
        res.write('event: message\ndata: {"id":1}\n\n');
        res.end();
      }, 5);
    });
    const response = await fetch(url);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(await response.text()).toBe('event: message\ndata: {"id":1}\n\n');
    expect(writes()).toBe(1);
  });

  it('sends the headers of a stream with nothing to send yet after a moment', async () => {
    let later: ReturnType<typeof setTimeout> | undefined;
    const { url } = await serving((res) => {
      res.writeHead(200, SSE);
      res.flushHeaders();
      later = setTimeout(() => res.end('event: message\ndata: {}\n\n'), 2_000);
    });
    const started = performance.now();
    const response = await fetch(url);
    // Headers well before the stream's first event (2 s), each after the same bounded wait.
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(response.status).toBe(200);
    clearTimeout(later);
    await response.body?.cancel();
  });

  it('leaves a response that ends at once, or with no flush, as it was', async () => {
    const { url } = await serving((res) => {
      res.writeHead(202);
      res.flushHeaders();
      res.end();
    });
    const response = await fetch(url);
    expect(response.status).toBe(202);
    expect(await response.text()).toBe('');
  });
});
