// redisLimits: a LimitStore on Redis, so many processes draw on one rate or budget. Each operation
// is one Lua script (EVALSHA, re-sent when the server answers NOSCRIPT), atomic on the server and
// timed by the server's clock, never the caller's.

import { createHash } from 'node:crypto';
import {
  limitChargeProblem,
  type LimitAnswer,
  type LimitCharge,
  type LimitStore,
} from '@toolgate/middleware';
import { closeOwned, connect, scriptCommand, type RedisConnection } from './connection';
import { CONSUME, REFUND } from './scripts';

export type RedisLimitsOptions = {
  /**
   * Prepended to every key; default `toolgate:limits:`. Give each deployment (or test) its own.
   * Keys read `<prefix><limit name>:<hash>`: identity values are hashed, never stored as they are.
   */
  readonly prefix?: string;
  /**
   * Told, once per outage, that the connection failed (a retryable `RedisLimitsError` naming no
   * host or password). The store listens for the client's errors itself, so ioredis never prints
   * `[ioredis] Unhandled error event`; calls meanwhile are refused (`LIMITS_STORE_FAILED`) or fail open.
   */
  readonly onError?: (error: RedisLimitsError) => void;
} & RedisConnection;

export interface RedisLimitStore extends LimitStore {
  /** Closes the store's own client; a client you passed in stays open. */
  close(): Promise<void>;
}

/** A Redis operation failed. The message names the operation only, never the server's reply or URL. */
export class RedisLimitsError extends Error {
  override readonly name = 'RedisLimitsError';
  /** Waiting may help: the server was unreachable or busy rather than the reply malformed. */
  readonly retryable: boolean;
  constructor(operation: string, retryable: boolean) {
    super(`redisLimits: ${operation} failed${retryable ? '; the server may be unreachable' : ''}`);
    this.retryable = retryable;
  }
}

const DEFAULT_PREFIX = 'toolgate:limits:';
const CONSUME_COMMAND = 'toolgateLimitsConsume';
const REFUND_COMMAND = 'toolgateLimitsRefund';

/** `<prefix><rule>:<first 22 base64url characters of SHA-256 of the bucket key>`. */
function redisKey(prefix: string, charge: LimitCharge): string {
  return `${prefix}${charge.rule}:${createHash('sha256').update(charge.key).digest('base64url').slice(0, 22)}`;
}

function parseConsume(reply: unknown, count: number): LimitAnswer {
  if (Array.isArray(reply) && reply[0] === 1) return { allowed: true };
  if (Array.isArray(reply) && reply[0] === 0) {
    const [, index, retryAfterMs] = reply as unknown[];
    if (
      typeof index === 'number' &&
      Number.isInteger(index) &&
      index >= 0 &&
      index < count &&
      typeof retryAfterMs === 'number' &&
      retryAfterMs >= 0
    ) {
      return { allowed: false, index, retryAfterMs };
    }
  }
  throw new RedisLimitsError('consume (malformed reply)', false);
}

/**
 * A LimitStore on Redis 5 or later, shared by every process that uses the same server and prefix.
 * Time is the Redis server's (`TIME` inside the script): the `now` the gate passes is not used.
 *
 * @example
 * const store = redisLimits({ url: process.env.REDIS_URL!, prefix: 'acme-prod:limits:' });
 * const chain = canonicalChain({ limits: { store, limits: [{ name: 'tenant-calls', per: 'tenant', calls: 1_000, windowMs: 60_000 }] } });
 */
export function redisLimits(options: RedisLimitsOptions): RedisLimitStore {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError('redisLimits: pass { url } or { redis }.');
  }
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  if (typeof prefix !== 'string') throw new TypeError('redisLimits: prefix must be a string.');
  const client = connect('redisLimits', options);
  const { redis } = client;
  const { onError } = options;
  if (onError !== undefined && typeof onError !== 'function')
    throw new TypeError('redisLimits: onError must be a function (error) => void.');
  // Without a listener ioredis prints every failed reconnect as unhandled, also on a client you
  // shared; the store listens, tells onError once per outage, and the operations that fail say so.
  let down = false;
  const connectionFailed = (): void => {
    if (down) return;
    down = true;
    try {
      onError?.(new RedisLimitsError('connection', true));
    } catch {
      // A throwing handler must not turn a lost connection into a crash.
    }
  };
  const connected = (): void => {
    down = false;
  };
  redis.on('error', connectionFailed);
  redis.on('ready', connected);
  const consumeScript = scriptCommand(redis, CONSUME_COMMAND, CONSUME);
  const refundScript = scriptCommand(redis, REFUND_COMMAND, REFUND);
  const argv = (charges: readonly LimitCharge[]): (string | number)[] => [
    ...charges.map((c) => redisKey(prefix, c)),
    ...charges.flatMap((c) => [c.amount, c.limit, c.windowMs]),
  ];

  return {
    async consume(charges) {
      if (charges.length === 0) return { allowed: true };
      // Out of bounds, the script's arithmetic or the key's expiry would overflow: refuse before the server.
      if (charges.some((charge) => limitChargeProblem(charge) !== undefined))
        throw new RedisLimitsError('consume (a charge out of bounds)', false);
      let reply: unknown;
      try {
        reply = await consumeScript(charges.length, ...argv(charges));
      } catch {
        throw new RedisLimitsError('consume', true);
      }
      return parseConsume(reply, charges.length);
    },
    async refund(charges) {
      if (charges.length === 0) return;
      try {
        await refundScript(charges.length, ...argv(charges));
      } catch {
        throw new RedisLimitsError('refund', true);
      }
    },
    async close() {
      if (!client.owned) {
        redis.off('error', connectionFailed);
        redis.off('ready', connected);
        return;
      }
      await closeOwned(client);
    },
  };
}
