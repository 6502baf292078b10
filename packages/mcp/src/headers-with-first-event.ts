import type { ServerResponse } from 'node:http';

/** The longest a stream's flushed headers wait for its first event. */
const HEADERS_WAIT_MS = 50;

/**
 * Headers flushed ahead of a stream's first event (an SSE answer to a POST: flushed at once, the
 * event written when the call returns) wait for that event, a moment at most: an answer that comes
 * soon, nearly every call, leaves as one packet (headers, event, end) where the headers were a
 * syscall and a wake-up of the client of their own. A stream with nothing to send yet gets its
 * headers after `HEADERS_WAIT_MS`.
 */
export function headersWithFirstEvent(res: ServerResponse): void {
  const { flushHeaders, write } = res;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // `headersSent` turns true at `writeHead`, before anything reaches the socket: a write is what sends them.
  let written = false;
  res.flushHeaders = function (this: ServerResponse) {
    if (timer !== undefined || written || this.writableEnded) return;
    timer = setTimeout(() => {
      if (!written && !this.writableEnded) flushHeaders.call(this);
    }, HEADERS_WAIT_MS);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
  };
  res.write = function (this: ServerResponse, ...args: Parameters<ServerResponse['write']>) {
    written = true;
    clearTimeout(timer);
    return write.apply(this, args);
  } as ServerResponse['write'];
}
