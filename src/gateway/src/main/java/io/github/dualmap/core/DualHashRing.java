package io.github.dualmap.core;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Predicate;

import net.openhft.hashing.LongHashFunction;
import org.jspecify.annotations.Nullable;

/**
 * Two independent consistent-hash rings over the same members: every key gets one home on
 * each ring. Immutable: membership changes build a new snapshot, so lookups need no lock
 * and any two routers with the same membership compute the same candidates whatever the
 * order of discovery. Lookups are O(log(members * virtual nodes)).
 */
public final class DualHashRing {

	/** Default virtual nodes per unit of weight. */
	public static final int DEFAULT_VIRTUAL_NODES = 160;

	/**
	 * The most virtual nodes per unit of weight that configuration and the command line
	 * accept: at {@link RingMember#MAX_WEIGHT} one instance then has 1,000,000, about
	 * {@link #MAX_RING_NODES}, so a larger setting could only be scaled down.
	 */
	public static final int MAX_VIRTUAL_NODES = 10_000;

	/**
	 * The most virtual nodes on one ring (1,048,576: 6,553 instances of weight 1 at the
	 * default 160 per unit; an instance scaled below one still gets one): a build hashes
	 * and sorts them under the pool's lock, so beyond this every count is scaled down in
	 * proportion.
	 */
	public static final int MAX_RING_NODES = 1 << 20;

	// Two seeds of xxHash3: independent placements of virtual nodes and of keys.
	private static final LongHashFunction[] HASH = { LongHashFunction.xx3(0x9E3779B97F4A7C15L),
			LongHashFunction.xx3(0xC2B2AE3D27D4EB4FL) };

	private static final DualHashRing EMPTY = new DualHashRing(List.of(), DEFAULT_VIRTUAL_NODES);

	private final List<RingMember> members;

	private final int virtualNodes;

	private final long[][] points = new long[2][];

	private final String[][] owners = new String[2][];

	// Each member's virtual nodes on each ring, in ring order (made on first use).
	private final AtomicReferenceArray<Map<String, int[]>> nodesOf = new AtomicReferenceArray<>(2);

	private DualHashRing(List<RingMember> members, int virtualNodes) {
		this.members = members;
		this.virtualNodes = virtualNodes;
		int[] counts = nodeCounts(members, virtualNodes);
		for (int r = 0; r < 2; r++) {
			build(r, counts);
		}
	}

	/** Builds rings over {@code members} (duplicates by id are rejected). */
	public static DualHashRing of(List<RingMember> members, int virtualNodes) {
		if (virtualNodes <= 0) {
			throw new IllegalArgumentException("virtualNodes must be > 0 but was " + virtualNodes);
		}
		List<RingMember> sorted = new ArrayList<>(members);
		sorted.sort(Comparator.comparing(RingMember::id));
		for (int i = 1; i < sorted.size(); i++) {
			if (sorted.get(i).id().equals(sorted.get(i - 1).id())) {
				throw new IllegalArgumentException("duplicate instance id '" + sorted.get(i).id() + "'");
			}
		}
		return new DualHashRing(List.copyOf(sorted), virtualNodes);
	}

	public static DualHashRing empty() {
		return EMPTY;
	}

	private void build(int ring, int[] counts) {
		int total = 0;
		for (int c : counts) {
			total += c;
		}
		long[] pts = new long[total];
		String[] own = new String[total];
		Integer[] order = new Integer[total];
		int k = 0;
		for (int i = 0; i < members.size(); i++) {
			String id = members.get(i).id();
			for (int v = 0; v < counts[i]; v++) {
				pts[k] = HASH[ring].hashBytes((id + '#' + v).getBytes(StandardCharsets.UTF_8));
				own[k] = id;
				order[k] = k;
				k++;
			}
		}
		// Sort by point, ties broken by owner id, so the result does not depend on input
		// order.
		Arrays.sort(order, (a, b) -> {
			int c = Long.compare(pts[a], pts[b]);
			return c != 0 ? c : own[a].compareTo(own[b]);
		});
		points[ring] = new long[total];
		owners[ring] = new String[total];
		for (int i = 0; i < total; i++) {
			points[ring][i] = pts[order[i]];
			owners[ring][i] = own[order[i]];
		}
	}

	/**
	 * Virtual nodes of each member: {@code virtualNodes x weight}, at least one, counted
	 * in {@code long} so no product or sum wraps; when they add up to more than
	 * {@link #MAX_RING_NODES} every count is scaled down by the same factor, which keeps
	 * the members' shares (and, computed from the sorted members alone, the same rings on
	 * every router).
	 */
	static int[] nodeCounts(List<RingMember> members, int virtualNodes) {
		if (members.size() > MAX_RING_NODES) {
			throw new IllegalArgumentException(
					members.size() + " instances are more than a ring holds (" + MAX_RING_NODES + ")");
		}
		long[] wanted = new long[members.size()];
		long total = 0;
		for (int i = 0; i < wanted.length; i++) {
			// RingMember bounds the weight at MAX_WEIGHT, so a count is at most
			// (2^31 - 1) x 100, about 2^38, and the sum of MAX_RING_NODES (2^20) of them
			// stays below 2^58: neither wraps a long.
			double exact = (double) virtualNodes * members.get(i).weight();
			wanted[i] = Math.max(1, Math.round(exact));
			total += wanted[i];
		}
		int[] counts = new int[wanted.length];
		double scale = total > MAX_RING_NODES ? (double) MAX_RING_NODES / total : 1;
		for (int i = 0; i < counts.length; i++) {
			counts[i] = (int) Math.max(1, scale == 1 ? wanted[i] : (long) (wanted[i] * scale));
		}
		return counts;
	}

	/** Position of {@code key} on ring {@code ring} (0 or 1). */
	static long position(int ring, long key) {
		return HASH[ring].hashLong(key);
	}

	private int startIndex(int ring, long key) {
		long pos = position(ring, key);
		int i = Arrays.binarySearch(points[ring], pos);
		if (i < 0) {
			i = -i - 1;
		}
		return i == points[ring].length ? 0 : i;
	}

	/**
	 * The two candidates of {@code key}. When both rings give the same instance, the
	 * second is the next distinct instance clockwise on ring 2. With one member both are
	 * that member.
	 * @throws IllegalStateException when the rings are empty
	 */
	public Candidates candidates(long key) {
		if (members.isEmpty()) {
			throw new IllegalStateException("no instances on the rings");
		}
		String a = owners[0][startIndex(0, key)];
		String b = walk(1, key, id -> !id.equals(a));
		return new Candidates(a, b == null ? a : b);
	}

	/**
	 * The first {@code out.length} distinct instances found walking both rings clockwise
	 * from {@code key}, alternating (ring 1, ring 2, ring 1, ...), each step taking that
	 * ring's next instance not yet found; written to {@code out} in that order. The first
	 * two are {@link #candidates(long)}, and the whole order is a function of the key and
	 * the membership alone, so every router with the same membership finds the same
	 * instances. Each ring's walk visits about as many virtual nodes as instances found.
	 * @return how many were found: {@code out.length}, or the number of members when
	 * smaller
	 */
	public int spread(long key, String[] out) {
		int want = Math.min(out.length, members.size());
		if (want == 0) {
			return 0;
		}
		int[] cursor = { startIndex(0, key), startIndex(1, key) };
		int[] visited = new int[2];
		int found = 0;
		int ring = 0;
		while (found < want) {
			long[] pts = points[ring];
			String[] own = owners[ring];
			String next = null;
			while (next == null && visited[ring] < pts.length) {
				String id = own[cursor[ring]];
				cursor[ring] = (cursor[ring] + 1) % pts.length;
				visited[ring]++;
				if (!contains(out, found, id)) {
					next = id;
				}
			}
			if (next != null) {
				out[found++] = next;
			}
			else if (visited[1 - ring] >= points[1 - ring].length) {
				break;
			}
			ring = 1 - ring;
		}
		return found;
	}

	private static boolean contains(String[] ids, int n, String id) {
		for (int i = 0; i < n; i++) {
			if (ids[i].equals(id)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * The first instance clockwise from {@code key} on ring {@code ring} that
	 * {@code accept} takes, visiting each distinct instance once; {@code null} when none
	 * does.
	 */
	public @Nullable String walk(int ring, long key, Predicate<String> accept) {
		checkRing(ring);
		return members.isEmpty() ? null : walkFrom(ring, startIndex(ring, key), accept);
	}

	/**
	 * Where {@link #walk} of ring {@code ring} from {@code key} starts: for a caller that
	 * walks from one key several times ({@link #walkFrom}).
	 */
	public int walkStart(int ring, long key) {
		checkRing(ring);
		return startIndex(ring, key);
	}

	/**
	 * {@link #walk} from a start {@link #walkStart} gave for this ring.
	 */
	public @Nullable String walkFrom(int ring, int start, Predicate<String> accept) {
		checkRing(ring);
		if (members.isEmpty()) {
			return null;
		}
		long[] pts = points[ring];
		String[] own = owners[ring];
		int n = members.size();
		// The first steps find what was seen by looking back over the points walked, so
		// the usual short walk allocates nothing; a longer one keeps a set.
		java.util.Set<String> seen = null;
		int distinct = 0;
		for (int i = 0; i < pts.length && distinct < n; i++) {
			String id = own[(start + i) % pts.length];
			boolean fresh;
			if (seen != null) {
				fresh = seen.add(id);
			}
			else {
				fresh = !walkedBefore(own, start, i, id);
				if (i + 1 == WALK_LOOK_BACK) {
					seen = new java.util.HashSet<>();
					for (int j = 0; j <= i; j++) {
						seen.add(own[(start + j) % pts.length]);
					}
				}
			}
			if (fresh) {
				distinct++;
				if (accept.test(id)) {
					return id;
				}
			}
		}
		return null;
	}

	/**
	 * How many points {@link #walkFrom} of ring {@code ring} from {@code start} passes
	 * before it reaches member {@code id}: the walk meets the members in the order of
	 * these counts. {@code Integer.MAX_VALUE} for an id that is not a member.
	 */
	public int stepsTo(int ring, int start, String id) {
		checkRing(ring);
		int[] nodes = nodesOf(ring).get(id);
		if (nodes == null) {
			return Integer.MAX_VALUE;
		}
		int i = Arrays.binarySearch(nodes, start);
		if (i < 0) {
			i = -i - 1;
		}
		return i < nodes.length ? nodes[i] - start : nodes[0] + points[ring].length - start;
	}

	private Map<String, int[]> nodesOf(int ring) {
		Map<String, int[]> m = nodesOf.get(ring);
		if (m == null) {
			synchronized (this) {
				m = nodesOf.get(ring);
				if (m == null) {
					String[] own = owners[ring];
					Map<String, Integer> counts = new HashMap<>();
					for (String o : own) {
						counts.merge(o, 1, Integer::sum);
					}
					Map<String, int[]> built = new HashMap<>();
					Map<String, Integer> filled = new HashMap<>();
					for (int i = 0; i < own.length; i++) {
						int[] nodes = built.computeIfAbsent(own[i], k -> new int[counts.get(k)]);
						int k = filled.merge(own[i], 1, Integer::sum) - 1;
						nodes[k] = i;
					}
					m = Map.copyOf(built);
					nodesOf.set(ring, m);
				}
			}
		}
		return m;
	}

	private static void checkRing(int ring) {
		if (ring != 0 && ring != 1) {
			throw new IllegalArgumentException("ring must be 0 or 1 but was " + ring);
		}
	}

	// Steps of a walk that look back over the points walked before it keeps a set.
	private static final int WALK_LOOK_BACK = 16;

	private static boolean walkedBefore(String[] own, int start, int steps, String id) {
		for (int j = 0; j < steps; j++) {
			if (own[(start + j) % own.length].equals(id)) {
				return true;
			}
		}
		return false;
	}

	public List<RingMember> members() {
		return members;
	}

	public int virtualNodes() {
		return virtualNodes;
	}

	/** Virtual nodes of {@code id} on one ring (for the actuator view). */
	public int virtualNodesOf(String id) {
		int n = 0;
		for (String o : owners[0]) {
			if (o.equals(id)) {
				n++;
			}
		}
		return n;
	}

	public boolean isEmpty() {
		return members.isEmpty();
	}

}
