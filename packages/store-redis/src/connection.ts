// How a Redis store gets its client: its own, made from a URL and closed with the store, or one the
// caller shares and keeps open. The stores' Lua scripts become commands on that client.

import { Redis, type RedisOptions } from 'ioredis';

/** Where a store keeps its data: a URL, or a client you made yourself. */
export type RedisConnection =
  | {
      /** e.g. `redis://127.0.0.1:6379/0`; never repeated in an error. */
      readonly url: string;
      /** Extra ioredis options for the store's own client. */
      readonly clientOptions?: RedisOptions;
      readonly redis?: never;
    }
  | {
      /** Shared with the caller: the store never closes it. */
      readonly redis: Redis;
      readonly url?: never;
      readonly clientOptions?: never;
    };

export interface StoreClient {
  readonly redis: Redis;
  /** The store made it, so the store closes it. */
  readonly owned: boolean;
}

/** The store's client; a TypeError naming `store` when the options give neither a URL nor a client. */
export function connect(store: string, options: RedisConnection): StoreClient {
  if (typeof options !== 'object' || options === null)
    throw new TypeError(`${store}: pass { url } or { redis }.`);
  if (options.redis !== undefined) {
    if (typeof options.redis?.defineCommand !== 'function')
      throw new TypeError(`${store}: redis must be an ioredis client.`);
    return { redis: options.redis, owned: false };
  }
  if (typeof options.url !== 'string' || options.url === '')
    throw new TypeError(`${store}: pass { url } or { redis }.`);
  // One retry per command: a server that is down fails the call fast instead of queueing it.
  const redis = new Redis(options.url, { maxRetriesPerRequest: 1, ...options.clientOptions });
  return { redis, owned: true };
}

/** Closes a client the store made; a shared one stays open. */
export async function closeOwned({ redis, owned }: StoreClient): Promise<void> {
  if (!owned) return;
  try {
    await redis.quit();
  } catch {
    redis.disconnect();
  }
}

export type ScriptCommand = (keyCount: number, ...keysAndArgs: (string | number)[]) => Promise<unknown>;

/** `lua` as a command on `redis` (EVALSHA, re-sent in full when the server answers NOSCRIPT). */
export function scriptCommand(redis: Redis, name: string, lua: string): ScriptCommand {
  redis.defineCommand(name, { lua });
  return (redis as unknown as Record<string, ScriptCommand>)[name]!.bind(redis);
}
