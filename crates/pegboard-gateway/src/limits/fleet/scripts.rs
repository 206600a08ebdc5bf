//! The Lua scripts that count limits in the store. Each runs atomically on the store (no
//! read-then-write from a replica), reads the time from the store's clock (`TIME`: one clock
//! for the whole fleet, whatever the replicas' clocks say), and leaves every key with a TTL.
//!
//! Numbers go to the store through `string.format('%.0f', n)`: Lua's own conversion writes
//! large numbers in exponent form, which would lose the microseconds.

use std::sync::LazyLock;

use redis::Script;

/// One call: its place among `maxConcurrent` and one of its `callsPerMinute`, in one step.
///
/// KEYS[1]: the rate's key (the theoretical arrival time, in µs of the store's clock);
/// KEYS[2]: the calls in progress (a sorted set: lease → expiry in ms).
/// ARGV: the emission interval in µs (0: no rate), the burst (calls per minute), the
/// concurrency limit (0: none), the lease's name, the lease's TTL in ms.
///
/// Returns `{0}` admitted, `{1}` refused for concurrency, `{2, µs}` refused for the rate with
/// the wait until the next call is allowed.
///
/// The rate is GCRA, as `governor` counts it on one replica: a burst of `n` calls, then one
/// more every `60 s / n`. The concurrency check comes first, so a call refused for it spends
/// no rate (as on one replica); expired leases (of a replica that died) are dropped first.
pub(super) static ADMIT_CALL: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local now_ms = math.floor(now / 1000)
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local ttl = tonumber(ARGV[5])
if limit > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('%.0f', now_ms))
  if redis.call('ZCARD', KEYS[2]) >= limit then
    return {1}
  end
end
if interval > 0 then
  local tat = tonumber(redis.call('GET', KEYS[1])) or now
  if tat < now then tat = now end
  local new_tat = tat + interval
  local allow_at = new_tat - burst * interval
  if now < allow_at then
    return {2, string.format('%.0f', allow_at - now)}
  end
  redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX',
    string.format('%.0f', math.ceil((new_tat - now) / 1000) + 1))
end
if limit > 0 then
  redis.call('ZADD', KEYS[2], string.format('%.0f', now_ms + ttl), ARGV[4])
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return {0}
",
    )
});

/// One session: a place among the client's `maxSessions`.
///
/// KEYS[1]: the client's sessions (a sorted set: lease → expiry in ms).
/// ARGV: the limit, the new lease's name, the lease's TTL in ms, and the lease of a session
/// closed to make room ("": none), given up in the same step.
///
/// Returns 1 when reserved, 0 at the limit. A lease already there (a session taken over from
/// another replica, its place named by its id) is kept, its expiry moved: it counts once.
pub(super) static RESERVE_SESSION: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local ttl = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%.0f', now_ms))
if ARGV[4] ~= '' then
  redis.call('ZREM', KEYS[1], ARGV[4])
end
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then
  redis.call('ZADD', KEYS[1], string.format('%.0f', now_ms + ttl), ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ttl)
  return 1
end
if redis.call('ZCARD', KEYS[1]) >= limit then
  return 0
end
redis.call('ZADD', KEYS[1], string.format('%.0f', now_ms + ttl), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ttl)
return 1
",
    )
});

/// A lease under another name (a session's place, named by the session's id once it has one).
///
/// KEYS[1]: a sorted set of leases. ARGV: the old name, the new one, the TTL in ms.
///
/// Returns 1 (the old lease, if still there, is gone; the new one holds the place).
pub(super) static RENAME: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[3])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[1], string.format('%.0f', now_ms + ttl), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ttl)
return 1
",
    )
});

/// Keep the leases this replica holds alive: each named lease still in the set gets its expiry
/// moved to TTL from now (a lease given back meanwhile is not added again).
///
/// KEYS[1]: a sorted set of leases. ARGV: the TTL in ms, then the leases.
pub(super) static RENEW: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local until_ms = string.format('%.0f', now_ms + ttl)
local kept = 0
for i = 2, #ARGV do
  kept = kept + redis.call('ZADD', KEYS[1], 'XX', 'CH', until_ms, ARGV[i])
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return kept
",
    )
});
