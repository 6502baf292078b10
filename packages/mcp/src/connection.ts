// One upstream connection that comes back: each attempt builds a fresh transport from the factory
// and a fresh SDK client; a connection that drops is attempted again with bounded exponential
// backoff, and `status()` says where it stands and why.

import { Client, SdkError, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/client';
import { UpstreamClient } from './upstream-client';

/** Where a client's connection stands. `reason` says why it is not connected, in words safe to show. */
export interface McpClientStatus {
  readonly state: 'idle' | 'connecting' | 'connected' | 'retrying' | 'failed' | 'closed';
  /** ISO 8601: when it entered this state. */
  readonly since: string;
  readonly reason?: string;
  /** Reconnection attempts made since the connection was last up. */
  readonly attempts?: number;
  /** ISO 8601: when the next attempt starts (retrying). */
  readonly nextAttemptAt?: string;
}

export interface BackoffOptions {
  /** First wait after a drop; default 250 ms. */
  readonly initialDelayMs?: number;
  /** Longest wait between attempts; default 10 s. */
  readonly maxDelayMs?: number;
  /** Attempts before the state is `failed`; default 8. A later call starts a new round. */
  readonly maxAttempts?: number;
}

/** The server could not be reached (down, restarting, or failed to start). Safe to show. */
export class McpUnavailableError extends Error {
  override readonly name = 'McpUnavailableError';
}

export interface ConnectionHooks {
  /** Registers handlers on a fresh client before it connects. */
  setup(client: Client): void;
  /** Runs once a client is connected and before calls use it; a throw fails the attempt. */
  connected(client: Client, again: boolean): Promise<void>;
  /** Told about every change of state. */
  changed(status: McpClientStatus): void;
}

type TransportFactory = () => Transport | Promise<Transport>;

const describe = (error: unknown): string =>
  error instanceof Error ? error.message.split('\n')[0]!.slice(0, 200) : String(error).slice(0, 200);

export class Connection {
  readonly #name: string;
  readonly #factory: TransportFactory;
  readonly #hooks: ConnectionHooks;
  readonly #initialDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #maxAttempts: number;
  readonly #capabilities: ConstructorParameters<typeof Client>[1];
  #status: McpClientStatus = { state: 'idle', since: new Date().toISOString() };
  #client: Client | undefined;
  #attempt: Promise<Client> | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #attempts = 0;
  #everConnected = false;

  constructor(
    name: string,
    factory: TransportFactory,
    hooks: ConnectionHooks,
    backoff: BackoffOptions,
    capabilities: ConstructorParameters<typeof Client>[1],
  ) {
    this.#name = name;
    this.#factory = factory;
    this.#hooks = hooks;
    this.#initialDelayMs = backoff.initialDelayMs ?? 250;
    this.#maxDelayMs = backoff.maxDelayMs ?? 10_000;
    this.#maxAttempts = backoff.maxAttempts ?? 8;
    this.#capabilities = capabilities;
  }

  status(): McpClientStatus {
    return this.#status;
  }

  /** The client when connected now, with no wait: what `client()` would resolve to at once; else undefined. */
  connectedClient(): Client | undefined {
    return this.#status.state === 'connected' ? this.#client : undefined;
  }

  /** The connected client; connects when idle or failed, waits for an attempt under way. */
  async client(): Promise<Client> {
    const { state } = this.#status;
    if (state === 'closed') throw new McpUnavailableError(`mcpClient '${this.#name}' is closed`);
    if (state === 'connected' && this.#client !== undefined) return this.#client;
    if (this.#attempt !== undefined) return this.#attempt;
    if (state === 'retrying')
      throw new McpUnavailableError(
        `MCP server '${this.#name}' is reconnecting (attempt ${this.#attempts} of ${this.#maxAttempts}): ${this.#status.reason ?? 'it went away'}`,
      );
    // Idle, or failed: a new round starts from the first delay.
    if (state === 'failed') this.#attempts = 0;
    return this.#try();
  }

  async close(): Promise<void> {
    this.#set({ state: 'closed' });
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = undefined;
    await client?.close().catch(() => undefined);
  }

  #set(status: Omit<McpClientStatus, 'since'>): void {
    this.#status = { ...status, since: new Date().toISOString() };
    this.#hooks.changed(this.#status);
  }

  #try(): Promise<Client> {
    const again = this.#everConnected;
    this.#set({ state: 'connecting', ...(this.#attempts > 0 ? { attempts: this.#attempts } : {}) });
    const attempt = this.#open(again).then(
      (client) => {
        this.#attempt = undefined;
        if (this.#status.state === 'closed') {
          void client.close().catch(() => undefined);
          throw new McpUnavailableError(`mcpClient '${this.#name}' is closed`);
        }
        this.#client = client;
        this.#attempts = 0;
        this.#everConnected = true;
        this.#set({ state: 'connected' });
        return client;
      },
      (error: unknown) => {
        this.#attempt = undefined;
        if (this.#status.state === 'closed') throw error;
        this.#dropped(`could not connect (${describe(error)})`);
        throw new McpUnavailableError(
          `could not connect to MCP server '${this.#name}' (${describe(error)})`,
          {
            cause: error,
          },
        );
      },
    );
    this.#attempt = attempt;
    return attempt;
  }

  async #open(again: boolean): Promise<Client> {
    try {
      return await this.#openWith(again, this.#capabilities);
    } catch (error) {
      // A stdio server that closed on the in-place server/discover probe predates 2026-07-28 and
      // cannot take an unknown request before initialize: start it once more, in the 2025 handshake.
      if (!(error instanceof SdkError && error.code === SdkErrorCode.EraNegotiationFailed)) throw error;
      if (this.#status.state === 'closed') throw error;
      return this.#openWith(again, { ...this.#capabilities, versionNegotiation: { mode: 'legacy' } });
    }
  }

  async #openWith(again: boolean, capabilities: ConstructorParameters<typeof Client>[1]): Promise<Client> {
    const transport = closedOnLostSession(await this.#factory());
    const client = new UpstreamClient({ name: `toolgate:${this.#name}`, version: '0.1.0' }, capabilities);
    this.#hooks.setup(client);
    let opened = false;
    client.onclose = () => {
      if (!opened || this.#client !== client) return;
      this.#client = undefined;
      if (this.#status.state === 'closed') return;
      this.#dropped('the connection closed');
    };
    try {
      await client.connect(transport);
      await this.#hooks.connected(client, again);
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
    opened = true;
    return client;
  }

  /** Schedules the next attempt, or gives up after the last one. */
  #dropped(reason: string): void {
    clearTimeout(this.#timer);
    if (this.#attempts >= this.#maxAttempts) {
      this.#set({ state: 'failed', reason, attempts: this.#attempts });
      return;
    }
    const delay = Math.min(this.#maxDelayMs, this.#initialDelayMs * 2 ** this.#attempts);
    this.#attempts += 1;
    this.#set({
      state: 'retrying',
      reason,
      attempts: this.#attempts,
      nextAttemptAt: new Date(Date.now() + delay).toISOString(),
    });
    this.#timer = setTimeout(() => {
      if (this.#status.state !== 'retrying') return;
      this.#try().catch(() => undefined);
    }, delay);
    this.#timer.unref?.();
  }
}

/**
 * A Streamable HTTP server that lost our session (it restarted, or expired it) answers 404 to every
 * request in it, and the SDK keeps the connection open: the connection is over, so the transport is
 * closed and the connection comes back with a new session, as after a crash.
 */
function closedOnLostSession(transport: Transport): Transport {
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    try {
      await send(message, options);
    } catch (error) {
      if (error instanceof SdkHttpError && error.status === 404 && transport.sessionId !== undefined)
        void transport.close().catch(() => undefined);
      throw error;
    }
  };
  return transport;
}
