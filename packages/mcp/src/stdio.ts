import type { Writable } from 'node:stream';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

/**
 * The SDK's stdio transport, probing the server's revision on the server's own process. The SDK's
 * base class would spawn a disposable second copy of the server just to ask `server/discover`, so
 * every connect started the server twice: a server that takes a lock, binds a port or writes a
 * marker at start then fails its real start. A subclass probes in place; a server that exits on
 * the probe is started once more in the 2025 handshake (the connection's fallback).
 *
 * Messages sent in one turn of the event loop reach the server in one write: concurrent calls cost
 * one pipe write (and one wake-up of the server) per turn instead of one per message.
 */
export class InPlaceStdioClientTransport extends StdioClientTransport {
  /** This turn's writes are held, to be released together. */
  #holding = false;

  override send(message: Parameters<StdioClientTransport['send']>[0]): Promise<void> {
    this.#cork();
    return super.send(message);
  }

  /** Holds this turn's writes to the server's stdin, released together once the turn's I/O is done. */
  #cork(): void {
    if (this.#holding) return;
    // The SDK keeps the child private; without it (another SDK build) each message is its own write.
    const stdin = (this as unknown as { _process?: { stdin?: Writable | null } })._process?.stdin;
    if (stdin === undefined || stdin === null || stdin.destroyed) return;
    this.#holding = true;
    stdin.cork();
    setImmediate(() => {
      this.#holding = false;
      stdin.uncork();
    });
  }
}
