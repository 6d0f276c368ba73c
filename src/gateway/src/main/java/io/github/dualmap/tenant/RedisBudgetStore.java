package io.github.dualmap.tenant;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Budgets shared by every gateway replica in one Redis server, in the manner of Spring
 * Cloud Gateway's {@code RedisRateLimiter}: one Lua script refills, checks and charges
 * all the lines of a request atomically, on Redis's clock (replicas' clocks may differ).
 * Each bucket is a hash ({@code l}: level, {@code t}: milliseconds) that expires once it
 * would be full again, so Redis keeps only the budgets in use. A tenant's keys share one
 * hash tag, so a Redis Cluster keeps them in one slot. A charge the gateway may stop
 * waiting for is named: a key beside the budgets ({@code {tenant}:op:<name>}) remembers
 * what it took for {@link #REMEMBER_MILLIS}, so that {@link #revoke} gives that back
 * once, whether the charge ran before the revocation or after it.
 */
public final class RedisBudgetStore implements BudgetStore {

	/**
	 * ARGV: cost, mode (0 always, 1 if admitted, 2 shadow, 3 revoke), how long a named
	 * charge is remembered in milliseconds (0: not named), then limit and window per
	 * line. KEYS: the lines, and for a named charge its op key last. Returns admitted
	 * (1/0), now, and each level, as strings (floats survive). A named charge whose op
	 * key exists (it was revoked before it arrived, or is sent again) takes nothing; one
	 * that takes leaves what it took in its op key. A revocation gives that back, once,
	 * and leaves the op key so that the charge, arriving later, takes nothing.
	 */
	static final String SCRIPT = """
			local t = redis.call('TIME')
			local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
			local cost = tonumber(ARGV[1])
			local mode = ARGV[2]
			local remember = tonumber(ARGV[3])
			local lines = #KEYS
			local op = nil
			if remember > 0 then
			  op = KEYS[lines]
			  lines = lines - 1
			end
			if mode == '3' then
			  cost = -(tonumber(redis.call('GET', op)) or 0)
			  redis.call('SET', op, 'revoked', 'PX', remember)
			end
			local levels = {}
			local admitted = 1
			for i = 1, lines do
			  local limit = tonumber(ARGV[2 + 2 * i])
			  local window = tonumber(ARGV[3 + 2 * i])
			  local state = redis.call('HMGET', KEYS[i], 'l', 't')
			  local level = tonumber(state[1])
			  if level == nil then
			    level = limit
			  else
			    local elapsed = math.max(0, now - tonumber(state[2]))
			    level = math.min(limit, level + elapsed * limit / window)
			  end
			  levels[i] = level
			  if level < math.min(cost, limit) then
			    admitted = 0
			  end
			end
			local take = mode ~= '1' or admitted == 1
			if op ~= nil and mode ~= '3' then
			  if redis.call('EXISTS', op) == 1 then
			    take = false
			  elseif take then
			    redis.call('SET', op, tostring(cost), 'PX', remember)
			  end
			end
			local result = { tostring(admitted), tostring(now) }
			for i = 1, lines do
			  local limit = tonumber(ARGV[2 + 2 * i])
			  local window = tonumber(ARGV[3 + 2 * i])
			  local level = levels[i]
			  if take then
			    level = math.min(limit, level - cost)
			  end
			  -- Until full again, at most about 35 years: a debt from an absurd estimate
			  -- would make a number Redis cannot read as an integer (1e+17), and a
			  -- script's failed call does not undo the HSET before it.
			  local ttl = math.min(math.ceil((limit - level) * window / limit) + 1000, 1099511627776)
			  redis.call('HSET', KEYS[i], 'l', tostring(level), 't', tostring(now))
			  redis.call('PEXPIRE', KEYS[i], ttl)
			  result[i + 2] = tostring(level)
			end
			return result
			""";

	/**
	 * How long a named charge, or its revocation, is remembered: longer than any wait for
	 * a script's answer, so that a revocation always finds the charge it revokes (or the
	 * charge its revocation).
	 */
	static final long REMEMBER_MILLIS = 60_000;

	@SuppressWarnings("rawtypes")
	private static final RedisScript<List> REDIS_SCRIPT = RedisScript.of(SCRIPT, List.class);

	private final ReactiveStringRedisTemplate redis;

	private final String keyPrefix;

	public RedisBudgetStore(ReactiveStringRedisTemplate redis, String keyPrefix) {
		this.redis = redis;
		this.keyPrefix = keyPrefix;
	}

	@Override
	public String kind() {
		return "redis";
	}

	@Override
	public Mono<Levels> charge(List<BudgetLine> lines, double cost, Charge charge) {
		return charge(lines, cost, charge, null);
	}

	@Override
	public Mono<Levels> charge(List<BudgetLine> lines, double cost, Charge charge, @Nullable String id) {
		return run(lines, cost, switch (charge) {
			case ALWAYS -> "0";
			case IF_ADMITTED -> "1";
			case SHADOW -> "2";
		}, id);
	}

	@Override
	public Mono<Void> revoke(List<BudgetLine> lines, String id) {
		return run(lines, 0, "3", id).then();
	}

	private Mono<Levels> run(List<BudgetLine> lines, double cost, String mode, @Nullable String id) {
		if (lines.isEmpty()) {
			return Mono.just(new Levels(true, new double[0], System.currentTimeMillis()));
		}
		List<String> keys = new ArrayList<>(lines.size() + 1);
		List<String> args = new ArrayList<>(3 + 2 * lines.size());
		args.add(Double.toString(cost));
		args.add(mode);
		args.add(id == null ? "0" : Long.toString(REMEMBER_MILLIS));
		addLines(lines, keys, args);
		if (id != null) {
			keys.add(opKey(lines, id));
		}
		return this.redis.execute(REDIS_SCRIPT, keys, args).next().map(result -> levels(result, lines.size()));
	}

	private void addLines(List<BudgetLine> lines, List<String> keys, List<String> args) {
		for (BudgetLine line : lines) {
			keys.add(this.keyPrefix + line.key());
			args.add(Long.toString(line.limit()));
			args.add(Long.toString(line.windowMillis()));
		}
	}

	/**
	 * The key remembering the charge {@code id}: with the tenant's hash tag, which every
	 * line of one request shares, so a Redis Cluster keeps it in their slot.
	 */
	private String opKey(List<BudgetLine> lines, String id) {
		String first = lines.get(0).key();
		int tag = first.indexOf("}:");
		return this.keyPrefix + (tag > 0 ? first.substring(0, tag + 2) : "") + "op:" + id;
	}

	private static Levels levels(List<?> result, int lines) {
		if (result.size() != lines + 2) {
			throw new IllegalStateException(
					"budget script answered " + result.size() + " values for " + lines + " lines");
		}
		double[] levels = new double[lines];
		for (int i = 0; i < lines; i++) {
			levels[i] = Double.parseDouble(String.valueOf(result.get(i + 2)));
		}
		return new Levels("1".equals(String.valueOf(result.get(0))), levels,
				(long) Double.parseDouble(String.valueOf(result.get(1))));
	}

}
