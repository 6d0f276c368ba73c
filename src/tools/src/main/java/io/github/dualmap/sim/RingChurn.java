package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import io.github.dualmap.core.Candidates;
import io.github.dualmap.core.DualHashRing;
import io.github.dualmap.core.RingMember;

/**
 * Measures what one membership change does to key placement: over random 64-bit routing
 * keys, the share whose DualMap candidate pair changes, whose pair loses both old
 * members, and, for comparison, whose home moves on one consistent-hash ring (ring 0 of
 * the same {@link DualHashRing}) and under hash-mod-N. Pure and deterministic for a seed.
 */
public final class RingChurn {

	/** Which way the membership changes. */
	public enum Kind {

		/** N to N + 1: one new instance joins. */
		ADD,

		/** N to N - 1: one instance leaves (averaged over several choices of it). */
		REMOVE;

		/** Lower-case name used in tables and JSON. */
		public String label() {
			return this == ADD ? "add" : "remove";
		}

	}

	/**
	 * Shares of keys affected by one change from {@code from} to {@code to} instances.
	 *
	 * @param kind add or remove
	 * @param from instances before
	 * @param to instances after
	 * @param keys keys sampled (per removed instance for {@link Kind#REMOVE})
	 * @param pairChanged the unordered candidate pair is not the same set
	 * @param firstChanged the first candidate (ring 0 home) changed: also the share of
	 * keys that lose their only home on one consistent-hash ring
	 * @param bothLost neither old candidate is in the new pair: the key's cached prefix
	 * is on neither of its new homes
	 * @param bothHomesMoved the raw home changed on both rings (before the distinct-pair
	 * rule picks the second candidate)
	 * @param modNMoved the home under hash-mod-N changed
	 */
	public record Change(Kind kind, int from, int to, long keys, double pairChanged, double firstChanged,
			double bothLost, double bothHomesMoved, double modNMoved) {
	}

	private final int virtualNodes;

	public RingChurn(int virtualNodes) {
		if (virtualNodes <= 0) {
			throw new IllegalArgumentException("virtual nodes must be > 0 but was " + virtualNodes);
		}
		this.virtualNodes = virtualNodes;
	}

	/**
	 * With the rings' default of {@value DualHashRing#DEFAULT_VIRTUAL_NODES} virtual
	 * nodes.
	 */
	public static RingChurn ofDefaults() {
		return new RingChurn(DualHashRing.DEFAULT_VIRTUAL_NODES);
	}

	/**
	 * Adding one instance to {@code n}, over {@code keys} keys drawn from {@code seed}.
	 */
	public Change add(int n, int keys, long seed) {
		check(n, 1, keys);
		List<String> before = ids(n);
		List<String> after = new ArrayList<>(before);
		after.add(id(n));
		Counts c = compare(before, after, keys, seed);
		return c.toChange(Kind.ADD, n, n + 1, keys);
	}

	/**
	 * Removing one of {@code n} instances, averaged over {@code removals} evenly spaced
	 * choices of the removed one; the same keys for each.
	 */
	public Change remove(int n, int keys, int removals, long seed) {
		check(n, 2, keys);
		if (removals <= 0 || removals > n) {
			throw new IllegalArgumentException("removals must be in 1.." + n + " but was " + removals);
		}
		List<String> before = ids(n);
		Counts total = new Counts();
		for (int r = 0; r < removals; r++) {
			List<String> after = new ArrayList<>(before);
			after.remove((int) ((long) r * n / removals));
			total.add(compare(before, after, keys, seed));
		}
		return total.toChange(Kind.REMOVE, n, n - 1, (long) keys * removals);
	}

	private Counts compare(List<String> before, List<String> after, int keys, long seed) {
		DualHashRing old = DualHashRing.of(members(before), virtualNodes);
		DualHashRing next = DualHashRing.of(members(after), virtualNodes);
		SplittableRandom random = new SplittableRandom(seed);
		Counts c = new Counts();
		for (int i = 0; i < keys; i++) {
			long key = random.nextLong();
			Candidates a = old.candidates(key);
			Candidates b = next.candidates(key);
			boolean keepsFirst = a.first().equals(b.first()) || a.first().equals(b.second());
			boolean keepsSecond = a.second().equals(b.first()) || a.second().equals(b.second());
			if (!(keepsFirst && keepsSecond)) {
				c.pairChanged++;
			}
			if (!keepsFirst && !keepsSecond) {
				c.bothLost++;
			}
			if (!a.first().equals(b.first())) {
				c.firstChanged++;
				if (!home1(old, key).equals(home1(next, key))) {
					c.bothHomesMoved++;
				}
			}
			// Hash-mod-N over the member list in order, as a naive client-side balancer
			// does.
			String modBefore = before.get((int) Long.remainderUnsigned(key, before.size()));
			String modAfter = after.get((int) Long.remainderUnsigned(key, after.size()));
			if (!modBefore.equals(modAfter)) {
				c.modNMoved++;
			}
		}
		return c;
	}

	private static String home1(DualHashRing rings, long key) {
		String id = rings.walk(1, key, any -> true);
		if (id == null) {
			throw new IllegalStateException("no instances on ring 1");
		}
		return id;
	}

	private static void check(int n, int min, int keys) {
		if (n < min) {
			throw new IllegalArgumentException("instances must be >= " + min + " but was " + n);
		}
		if (keys <= 0) {
			throw new IllegalArgumentException("keys must be > 0 but was " + keys);
		}
	}

	private static String id(int k) {
		return String.format("engine-%03d", k);
	}

	private static List<String> ids(int n) {
		List<String> ids = new ArrayList<>(n);
		for (int k = 0; k < n; k++) {
			ids.add(id(k));
		}
		return ids;
	}

	private static List<RingMember> members(List<String> ids) {
		return ids.stream().map(id -> new RingMember(id, 1.0)).toList();
	}

	private static final class Counts {

		long pairChanged;

		long firstChanged;

		long bothLost;

		long bothHomesMoved;

		long modNMoved;

		void add(Counts o) {
			pairChanged += o.pairChanged;
			firstChanged += o.firstChanged;
			bothLost += o.bothLost;
			bothHomesMoved += o.bothHomesMoved;
			modNMoved += o.modNMoved;
		}

		Change toChange(Kind kind, int from, int to, long keys) {
			double k = keys;
			return new Change(kind, from, to, keys, pairChanged / k, firstChanged / k, bothLost / k, bothHomesMoved / k,
					modNMoved / k);
		}

	}

}
