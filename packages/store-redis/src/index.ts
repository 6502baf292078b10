// Every export here is public API of @toolgate/store-redis.

export type { RedisConnection } from './connection';
export type { RedisLimitsOptions, RedisLimitStore } from './limits';
export { RedisLimitsError, redisLimits } from './limits';
export type { RedisGrantsOptions, RedisSpentStateStore, RedisStandingGrantStore } from './grants';
export { RedisGrantsError, redisSpentStates, redisStandingGrants } from './grants';
