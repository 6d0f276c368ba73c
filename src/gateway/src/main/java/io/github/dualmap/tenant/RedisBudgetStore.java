package io.github.dualmap.tenant;

import java.util.ArrayList;
import java.util.List;

import reactor.core.publisher.Mono;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Budgets shared by every gateway replica in one Redis server, in the manner of Spring
 * Cloud Gateway's {@code RedisRateLimiter}: one Lua script refills, checks and charges
 * all the lines of a request atomically, on Redis's clock (replicas' clocks may differ).
 * Each bucket is a hash ({@code l}: level, {@code t}: milliseconds) that expires once it
 * would be full again, so Redis keeps only the budgets in use. A tenant's keys share one
 * hash tag, so a Redis Cluster keeps them in one slot.
 */
public final class RedisBudgetStore implements BudgetStore {

	/**
	 * ARGV: cost, mode (0 always, 1 if admitted, 2 shadow), then limit and window per
	 * key. Returns admitted (1/0), now, and each level, as strings (floats survive).
	 */
	static final String SCRIPT = """
			local t = redis.call('TIME')
			local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
			local cost = tonumber(ARGV[1])
			local mode = ARGV[2]
			local levels = {}
			local admitted = 1
			for i = 1, #KEYS do
			  local limit = tonumber(ARGV[1 + 2 * i])
			  local window = tonumber(ARGV[2 + 2 * i])
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
			local result = { tostring(admitted), tostring(now) }
			for i = 1, #KEYS do
			  local limit = tonumber(ARGV[1 + 2 * i])
			  local window = tonumber(ARGV[2 + 2 * i])
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
		if (lines.isEmpty()) {
			return Mono.just(new Levels(true, new double[0], System.currentTimeMillis()));
		}
		List<String> keys = new ArrayList<>(lines.size());
		List<String> args = new ArrayList<>(2 + 2 * lines.size());
		args.add(Double.toString(cost));
		args.add(switch (charge) {
			case ALWAYS -> "0";
			case IF_ADMITTED -> "1";
			case SHADOW -> "2";
		});
		for (BudgetLine line : lines) {
			keys.add(this.keyPrefix + line.key());
			args.add(Long.toString(line.limit()));
			args.add(Long.toString(line.windowMillis()));
		}
		return this.redis.execute(REDIS_SCRIPT, keys, args).next().map(result -> levels(result, lines.size()));
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
