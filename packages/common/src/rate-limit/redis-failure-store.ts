import type Redis from 'ioredis';
import type { RedisCache } from '../cache';
import type { FailureStore, StoreKey, Stored } from './failure-store';

/*
 * Lua scripts, so that checking and counting are one step in Redis (replicas share the counts).
 * KEYS are the policies' keys; ARGV holds each key's limit, window (ms) and the 1-based index of the key
 * whose count must be above zero for it to refuse (0: none; -1: it never refuses), in turn.
 */
/** Adds one to every key (its window starts with its first count) and returns `out`: each count and PTTL in turn. */
const INCREMENT_ALL = `
for i, key in ipairs(KEYS) do
  local count = redis.call('INCR', key)
  local ttl = redis.call('PTTL', key)
  if count == 1 or ttl < 0 then redis.call('PEXPIRE', key, ARGV[3 * i - 1]) ttl = tonumber(ARGV[3 * i - 1]) end
  out[#out + 1] = count
  out[#out + 1] = ttl
end
return out`;

const RESERVE = `
for i, key in ipairs(KEYS) do
  local count = tonumber(redis.call('GET', key) or '0')
  local after = tonumber(ARGV[3 * i])
  if count >= tonumber(ARGV[3 * i - 2])
    and (after == 0 or (after > 0 and tonumber(redis.call('GET', KEYS[after]) or '0') > 0)) then
    return {0, i, count, redis.call('PTTL', key)}
  end
end
local out = {1}${INCREMENT_ALL}`;

const ADD = `
local out = {}${INCREMENT_ALL}`;

/** ARGV[1]: how many of KEYS (the first ones) to release; the rest are deleted. */
const SETTLE = `
local release = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  if i <= release then
    if tonumber(redis.call('GET', key) or '0') > 0 then redis.call('DECR', key) end
  else
    redis.call('DEL', key)
  end
end
return 0`;

export class RedisFailureStore implements FailureStore {
  constructor(private readonly cache: RedisCache) {}

  private async eval(script: string, keys: string[], args: (string | number)[]): Promise<number[]> {
    await this.cache.whenReady();
    const redis: Redis = this.cache.redis;
    return (await redis.eval(script, keys.length, ...keys, ...args)) as number[];
  }

  private static limits(keys: StoreKey[]): number[] {
    // the key that must have failed, 1-based; 0: none; -1: it is not in this operation (never refuses)
    const after = (k: StoreKey) => (k.onlyAfter === undefined ? 0 : k.onlyAfter < 0 ? -1 : k.onlyAfter + 1);
    return keys.flatMap((k) => [k.limit, k.windowMs, after(k)]);
  }

  private static pairs(flat: number[]): Stored[] {
    const out: Stored[] = [];
    for (let i = 0; i < flat.length; i += 2) out.push({ count: flat[i], ttlMs: flat[i + 1] });
    return out;
  }

  async reserve(keys: StoreKey[]) {
    if (keys.length === 0) return { counts: [] };
    const result = await this.eval(
      RESERVE,
      keys.map((k) => k.key),
      RedisFailureStore.limits(keys),
    );
    if (result[0] === 0) return { full: result[1] - 1, stored: { count: result[2], ttlMs: result[3] } };
    return { counts: RedisFailureStore.pairs(result.slice(1)) };
  }

  async add(keys: StoreKey[]) {
    if (keys.length === 0) return [];
    return RedisFailureStore.pairs(
      await this.eval(
        ADD,
        keys.map((k) => k.key),
        RedisFailureStore.limits(keys),
      ),
    );
  }

  async settle(release: string[], remove: string[]) {
    if (release.length + remove.length === 0) return;
    await this.eval(SETTLE, [...release, ...remove], [release.length]);
  }
}
