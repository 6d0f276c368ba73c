package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Locale;

import io.github.dualmap.core.Tenant;
import io.github.dualmap.sim.trace.Trace;
import io.github.dualmap.sim.trace.TraceRequest;
import net.openhft.hashing.LongHashFunction;

/**
 * Tenants of a simulated run: each conversation of the trace (the requests that share
 * their first prefix block past any widely shared system prompt, see {@link #assign})
 * belongs to one tenant by a seeded hash, so a tenant is a random share of the trace's
 * conversations and keeps its own prefixes, the same for every policy and rate.
 *
 * @param name the mix's name on the command line
 * @param members the tenants with the share of conversations each gets
 */
public record TenantMix(String name, List<Member> members) {

	/** The quiet tenant of {@link #NOISY}. */
	public static final String QUIET = "quiet";

	/** The noisy tenant of {@link #NOISY}. */
	public static final String NOISY_TENANT = "noisy";

	/**
	 * Two tenants of equal weight and priority, one sending ten times the other's
	 * requests: the noisy-neighbour workload.
	 */
	public static final TenantMix NOISY = new TenantMix("noisy", List.of(new Member(new Tenant(QUIET, 1, 0), 1.0 / 11),
			new Member(new Tenant(NOISY_TENANT, 1, 0), 10.0 / 11)));

	/**
	 * One tenant and its share of the conversations.
	 *
	 * @param tenant the tenant
	 * @param share the fraction of conversations it sends, in (0, 1]
	 */
	public record Member(Tenant tenant, double share) {

		public Member {
			if (!(share > 0 && share <= 1)) {
				throw new IllegalArgumentException(
						"tenant '" + tenant.name() + "' needs a share in (0, 1] but has " + share);
			}
		}

	}

	public TenantMix {
		members = List.copyOf(members);
		double total = members.stream().mapToDouble(Member::share).sum();
		if (members.isEmpty() || Math.abs(total - 1) > 1e-9) {
			throw new IllegalArgumentException(
					"the shares of tenant mix '" + name + "' add up to " + total + ", not 1");
		}
	}

	/** The mix a {@code --tenants} value names. */
	public static TenantMix fromCliName(String name) {
		if (NOISY.name().equals(name.strip().toLowerCase(Locale.ROOT))) {
			return NOISY;
		}
		throw new IllegalArgumentException("unknown --tenants '" + name + "' (noisy)");
	}

	public int count() {
		return members.size();
	}

	public Tenant tenant(int index) {
		return members.get(index).tenant();
	}

	/** The index of the tenant called {@code name}. */
	public int indexOf(String name) {
		for (int i = 0; i < members.size(); i++) {
			if (members.get(i).tenant().name().equals(name)) {
				return i;
			}
		}
		throw new IllegalArgumentException("tenant mix '" + this.name + "' has no tenant '" + name + "'");
	}

	/** Leading blocks of a prompt looked at for the block that names its conversation. */
	static final int MAX_DEPTH = 4;

	/**
	 * The tenant (an index into {@link #members()}) of every request of {@code trace} in
	 * a run seeded {@code seed}. A request's conversation is named by the first of its
	 * leading blocks that fewer than half the requests sharing its first block have (the
	 * blocks before it are a system prompt many conversations share); a request with no
	 * such block among its first {@value #MAX_DEPTH} is a conversation of its own.
	 */
	public int[] assign(Trace trace, long seed) {
		Map<Long, Integer> counts = new HashMap<>();
		for (TraceRequest r : trace.requests()) {
			for (int p = 0; p < Math.min(MAX_DEPTH, r.hashIds().length); p++) {
				counts.merge(r.hashIds()[p], 1, Integer::sum);
			}
		}
		int[] out = new int[trace.size()];
		for (int i = 0; i < out.length; i++) {
			long[] ids = trace.requests().get(i).hashIds();
			int first = counts.get(ids[0]);
			long conversation = first == 1 ? ids[0] : -1 - (long) i;
			for (int p = 1; p < Math.min(MAX_DEPTH, ids.length) && first > 1; p++) {
				if (2L * counts.get(ids[p]) < first) {
					conversation = ids[p];
					break;
				}
			}
			out[i] = tenantOfConversation(conversation, seed);
		}
		return out;
	}

	private int tenantOfConversation(long conversation, long seed) {
		double u = (LongHashFunction.xx3(seed ^ 0x7E4A47L).hashLong(conversation) >>> 11) * 0x1.0p-53;
		double upTo = 0;
		for (int t = 0; t < members.size() - 1; t++) {
			upTo += members.get(t).share();
			if (u < upTo) {
				return t;
			}
		}
		return members.size() - 1;
	}

	/**
	 * The requests of {@code trace} of tenant {@code index} alone, at their own
	 * timestamps; {@code warmup} of the whole trace becomes the number of them among its
	 * first {@code warmup}.
	 */
	public Alone alone(Trace trace, int index, int warmup, long seed) {
		List<TraceRequest> kept = new ArrayList<>();
		int keptWarmup = 0;
		int[] tenants = assign(trace, seed);
		for (int i = 0; i < trace.size(); i++) {
			TraceRequest r = trace.requests().get(i);
			if (tenants[i] == index) {
				kept.add(r);
				if (i < warmup) {
					keptWarmup++;
				}
			}
		}
		return new Alone(new Trace(trace.name() + " (" + tenant(index).name() + " alone)", trace.blockTokens(), kept),
				keptWarmup);
	}

	/**
	 * One tenant's requests of a trace.
	 *
	 * @param trace its requests
	 * @param warmup how many of them fall in the whole trace's warm-up
	 */
	public record Alone(Trace trace, int warmup) {

		/**
		 * The rate that replays {@link #trace()} at the timestamps the whole trace has at
		 * {@code rate}.
		 */
		public double rateFor(Trace whole, double rate) {
			return rate * trace.nativeRate() / whole.nativeRate();
		}

	}

}
