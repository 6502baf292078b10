// Standing grants and spent requestStates on Redis, for deployments whose shared state lives there.
// A grant is a hash whose counters only Lua scripts change (atomic on the server); the time they
// judge expiry by is the caller's clock, passed in, so every store judges it as the dispatcher does.
// A spent nonce is one SET … NX that expires with the state it came from.

import type { SpentStateStore, StandingGrant, StandingGrantFilter, StandingGrantStore } from '@toolgate/core';
import { closeOwned, connect, scriptCommand, type RedisConnection, type StoreClient } from './connection';

export type RedisGrantsOptions = {
  /** Prepended to every key; default `toolgate:grants:`. Give each deployment (or test) its own. */
  readonly prefix?: string;
  /** Milliseconds since the epoch; injectable for tests. */
  readonly now?: () => number;
} & RedisConnection;

export interface RedisStandingGrantStore extends StandingGrantStore {
  /** Closes the store's own client; a client you passed in stays open. */
  close(): Promise<void>;
}

export interface RedisSpentStateStore extends SpentStateStore {
  /** Closes the store's own client; a client you passed in stays open. */
  close(): Promise<void>;
}

/** A Redis operation failed. The message names the operation only, never the server's reply or URL. */
export class RedisGrantsError extends Error {
  override readonly name = 'RedisGrantsError';
  constructor(store: string, operation: string) {
    super(`${store}: ${operation} failed; the server may be unreachable`);
  }
}

// KEYS[1] the grant, KEYS[2] the index. ARGV: id, created_ms, json, uses, max ('' for none), expires_ms, revoked, tenant, principal, tool.
const CREATE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'json', ARGV[3], 'uses', ARGV[4], 'max', ARGV[5], 'expires', ARGV[6],
  'revoked', ARGV[7], 'tenant', ARGV[8], 'principal', ARGV[9], 'tool', ARGV[10])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1
`;

// KEYS[1] the grant. ARGV[1] now. 1 when one use was counted.
const USE = `
local f = redis.call('HMGET', KEYS[1], 'uses', 'max', 'expires', 'revoked')
if not f[1] then return 0 end
if f[4] ~= '0' then return 0 end
if tonumber(f[3]) <= tonumber(ARGV[1]) then return 0 end
if f[2] ~= '' and tonumber(f[1]) >= tonumber(f[2]) then return 0 end
redis.call('HINCRBY', KEYS[1], 'uses', 1)
return 1
`;

// KEYS[1] the grant. 1 when it was active and is now revoked.
const REVOKE = `
local revoked = redis.call('HGET', KEYS[1], 'revoked')
if revoked ~= '0' then return 0 end
redis.call('HSET', KEYS[1], 'revoked', '1')
return 1
`;

function clientOf(store: string, options: RedisGrantsOptions): StoreClient {
  const client = connect(store, options);
  // The operations that fail say so; an unhandled 'error' event would only print.
  if (client.owned) client.redis.on('error', () => undefined);
  return client;
}

const active = (grant: StandingGrant, now: number): boolean =>
  grant.revoked !== true &&
  Date.parse(grant.expiresAt) > now &&
  (grant.maxUses === undefined || grant.uses < grant.maxUses);

/**
 * Standing grants on Redis: uses counted atomically by a Lua script, so processes sharing the
 * server never let a grant answer more calls than it allows.
 */
export function redisStandingGrants(options: RedisGrantsOptions): RedisStandingGrantStore {
  const STORE = 'redisStandingGrants';
  const client = clientOf(STORE, options);
  const { redis } = client;
  const prefix = options.prefix ?? 'toolgate:grants:';
  if (typeof prefix !== 'string') throw new TypeError(`${STORE}: prefix must be a string.`);
  const now = options.now ?? Date.now;
  const key = (id: string) => `${prefix}grant:${id}`;
  const index = `${prefix}index`;
  const createScript = scriptCommand(redis, 'toolgateGrantCreate', CREATE);
  const useScript = scriptCommand(redis, 'toolgateGrantUse', USE);
  const revokeScript = scriptCommand(redis, 'toolgateGrantRevoke', REVOKE);
  const attempt = async <T>(operation: string, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch {
      throw new RedisGrantsError(STORE, operation);
    }
  };
  const parse = (fields: (string | null)[]): StandingGrant | undefined => {
    const [json, uses, revoked] = fields;
    if (json === null || json === undefined) return undefined;
    const grant = JSON.parse(json) as StandingGrant;
    return { ...grant, uses: Number(uses), ...(revoked === '1' ? { revoked: true } : {}) };
  };
  const read = (id: string) =>
    redis.hmget(key(id), 'json', 'uses', 'revoked').then((fields) => parse(fields));

  return {
    async create(grant) {
      const created = await attempt(`create grant '${grant.id}'`, () =>
        createScript(
          2,
          key(grant.id),
          index,
          grant.id,
          Date.parse(grant.createdAt),
          JSON.stringify(grant),
          grant.uses,
          grant.maxUses ?? '',
          Date.parse(grant.expiresAt),
          grant.revoked === true ? '1' : '0',
          grant.tenant ?? '',
          grant.principal ?? '',
          grant.toolName,
        ),
      );
      if (created !== 1) throw new Error(`${STORE}: grant '${grant.id}' exists`);
    },
    async get(id) {
      return attempt(`read grant '${id}'`, () => read(id));
    },
    async list(filter: StandingGrantFilter = {}) {
      const at = now();
      const grants = await attempt('list grants', async () => {
        const ids = await redis.zrevrange(index, 0, -1);
        const pipeline = redis.pipeline();
        for (const id of ids) pipeline.hmget(key(id), 'json', 'uses', 'revoked');
        const replies = (await pipeline.exec()) ?? [];
        return replies.flatMap(([error, fields]) => {
          if (error !== null) throw error;
          const grant = parse(fields as (string | null)[]);
          return grant === undefined ? [] : [grant];
        });
      });
      return grants.filter(
        (grant) =>
          (filter.tenant === undefined || grant.tenant === filter.tenant) &&
          (filter.principal === undefined || grant.principal === filter.principal) &&
          (filter.toolName === undefined || grant.toolName === filter.toolName) &&
          (filter.active === undefined || active(grant, at) === filter.active),
      );
    },
    async use(id) {
      return (await attempt(`use grant '${id}'`, () => useScript(1, key(id), now()))) === 1;
    },
    async revoke(id) {
      return (await attempt(`revoke grant '${id}'`, () => revokeScript(1, key(id)))) === 1;
    },
    close: () => closeOwned(client),
  };
}

/** Spent requestState nonces on Redis: one SET … NX PX per spend, expiring with the state. */
export function redisSpentStates(options: RedisGrantsOptions): RedisSpentStateStore {
  const STORE = 'redisSpentStates';
  const client = clientOf(STORE, options);
  const { redis } = client;
  const prefix = options.prefix ?? 'toolgate:grants:';
  const now = options.now ?? Date.now;
  return {
    async spend(nonce, expiresAt) {
      if (typeof nonce !== 'string' || nonce === '') return false;
      const ttl = Math.max(1, Math.ceil(expiresAt - now()));
      try {
        return (await redis.set(`${prefix}state:${nonce}`, '1', 'PX', ttl, 'NX')) === 'OK';
      } catch {
        throw new RedisGrantsError(STORE, 'spend a requestState');
      }
    },
    close: () => closeOwned(client),
  };
}
