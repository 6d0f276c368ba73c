package io.github.dualmap.sim.trace;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Seeded generators of shared-prefix workloads, in the Mooncake representation (512-token
 * blocks, equal id = equal prefix). Arrivals are Poisson at one request per second; the
 * simulator rescales them to the rate under test.
 */
public enum SyntheticWorkload {

	/**
	 * Many tenants, each with its own system prompt of 4 to 16 blocks, chosen with Zipf
	 * popularity (exponent 1.1 over 64 tenants), followed by a user message of their own.
	 */
	TENANTS {
		@Override
		List<TraceRequest> generate(int requests, SplittableRandom random, IdSource ids) {
			ZipfDistribution popularity = new ZipfDistribution(TENANT_COUNT, TENANT_ZIPF_EXPONENT);
			long[][] systemPrompts = new long[TENANT_COUNT][];
			for (int t = 0; t < TENANT_COUNT; t++) {
				systemPrompts[t] = ids.fresh(random.nextInt(4, 17));
			}
			List<TraceRequest> out = new ArrayList<>(requests);
			double clock = 0;
			for (int i = 0; i < requests; i++) {
				clock += exponential(random, 1000.0);
				long[] system = systemPrompts[popularity.sample(random)];
				int user = random.nextInt(128, 2049);
				out.add(request(clock, system, user, random.nextInt(64, 513), ids));
			}
			return out;
		}
	},

	/**
	 * Multi-turn chat sessions: each turn's prompt is the previous prompt, the previous
	 * answer and a new user message, so its full blocks extend the previous turn's chain.
	 * Each turn records its session ({@link TraceRequest#session()}), as a client would
	 * send it to a load balancer. Sessions start as a Poisson process, have 2 to 8 turns,
	 * and users think for an exponential time (mean 20 s) between turns.
	 */
	SESSIONS {
		@Override
		List<TraceRequest> generate(int requests, SplittableRandom random, IdSource ids) {
			long[] system = ids.fresh(2);
			List<TraceRequest> all = new ArrayList<>();
			double start = 0;
			long sessions = 0;
			while (all.size() < requests) {
				start += exponential(random, 5000.0);
				session(start, system, random, ids, all, sessions++);
			}
			// Sessions starting after the n-th earliest turn cannot add to the first n.
			double horizon = nthEarliest(all, requests);
			while (start < horizon) {
				start += exponential(random, 5000.0);
				session(start, system, random, ids, all, sessions++);
			}
			all.sort(Comparator.comparingDouble(TraceRequest::timestampMillis));
			return all.subList(0, requests);
		}
	},

	/**
	 * Retrieval-augmented generation: one shared system block, then one of 256 documents
	 * of 4 to 12 blocks chosen with Zipf popularity (exponent 0.9), then a question.
	 */
	RAG {
		@Override
		List<TraceRequest> generate(int requests, SplittableRandom random, IdSource ids) {
			long[] system = ids.fresh(1);
			ZipfDistribution popularity = new ZipfDistribution(DOCUMENT_COUNT, DOCUMENT_ZIPF_EXPONENT);
			long[][] documents = new long[DOCUMENT_COUNT][];
			for (int d = 0; d < DOCUMENT_COUNT; d++) {
				long[] doc = ids.fresh(random.nextInt(4, 13));
				long[] withSystem = new long[system.length + doc.length];
				System.arraycopy(system, 0, withSystem, 0, system.length);
				System.arraycopy(doc, 0, withSystem, system.length, doc.length);
				documents[d] = withSystem;
			}
			List<TraceRequest> out = new ArrayList<>(requests);
			double clock = 0;
			for (int i = 0; i < requests; i++) {
				clock += exponential(random, 1000.0);
				long[] prefix = documents[popularity.sample(random)];
				out.add(request(clock, prefix, random.nextInt(32, 513), random.nextInt(32, 257), ids));
			}
			return out;
		}
	},

	/**
	 * No prefix reuse: every request has blocks of its own, with prompt and output
	 * lengths shaped like a chat service's. Both are lognormal with the medians of the
	 * conversation trace of Azure's LLM inference traces (2023) as Splitwise reports them
	 * (Patel et al., "Splitwise: Efficient Generative LLM Inference Using Phase
	 * Splitting", ISCA 2024, section III: median prompt 1020 tokens, median output 129)
	 * and a log-scale spread of {@link #NO_REUSE_SIGMA} (a chosen value, not fitted),
	 * clipped to [{@link #NO_REUSE_MIN_PROMPT}, {@link #MAX_SESSION_TOKENS}] prompt and
	 * [1, {@link #NO_REUSE_MAX_OUTPUT}] output tokens.
	 */
	NO_REUSE {
		@Override
		List<TraceRequest> generate(int requests, SplittableRandom random, IdSource ids) {
			List<TraceRequest> out = new ArrayList<>(requests);
			double clock = 0;
			for (int i = 0; i < requests; i++) {
				clock += exponential(random, 1000.0);
				int prompt = lognormal(random, NO_REUSE_MEDIAN_PROMPT, NO_REUSE_MIN_PROMPT, MAX_SESSION_TOKENS);
				int output = lognormal(random, NO_REUSE_MEDIAN_OUTPUT, 1, NO_REUSE_MAX_OUTPUT);
				out.add(request(clock, new long[0], prompt, output, ids));
			}
			return out;
		}
	};

	/** Median prompt of {@link #NO_REUSE}: Splitwise's conversation trace. */
	public static final int NO_REUSE_MEDIAN_PROMPT = 1020;

	/** Median output of {@link #NO_REUSE}: Splitwise's conversation trace. */
	public static final int NO_REUSE_MEDIAN_OUTPUT = 129;

	/** Standard deviation of the log of {@link #NO_REUSE}'s lengths. */
	public static final double NO_REUSE_SIGMA = 1.0;

	/** Shortest prompt of {@link #NO_REUSE}. */
	public static final int NO_REUSE_MIN_PROMPT = 16;

	/** Longest output of {@link #NO_REUSE}. */
	public static final int NO_REUSE_MAX_OUTPUT = 4096;

	/** Tenants in {@link #TENANTS}. */
	public static final int TENANT_COUNT = 64;

	/** Zipf exponent of tenant popularity. */
	public static final double TENANT_ZIPF_EXPONENT = 1.1;

	/** Documents in {@link #RAG}. */
	public static final int DOCUMENT_COUNT = 256;

	/** Zipf exponent of document popularity. */
	public static final double DOCUMENT_ZIPF_EXPONENT = 0.9;

	/** Sessions end once a prompt would exceed this many tokens. */
	public static final int MAX_SESSION_TOKENS = 32_768;

	static final int BLOCK = 512;

	/** Generates {@code requests} requests, the same ones for the same seed. */
	public Trace generate(int requests, long seed) {
		if (requests < 2) {
			throw new IllegalArgumentException("synthetic trace needs at least 2 requests but got " + requests);
		}
		return new Trace("synthetic-" + cliName(), BLOCK,
				generate(requests, new SplittableRandom(seed), new IdSource()));
	}

	abstract List<TraceRequest> generate(int requests, SplittableRandom random, IdSource ids);

	/** The lower-case name used by {@code --synthetic}. */
	public String cliName() {
		return name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	/**
	 * The generator called {@code name} ({@code tenants}, {@code sessions}, {@code rag}
	 * {@code no-reuse}).
	 */
	public static SyntheticWorkload fromCliName(String name) {
		for (SyntheticWorkload w : values()) {
			if (w.cliName().equals(name)) {
				return w;
			}
		}
		throw new IllegalArgumentException(
				"unknown synthetic workload '" + name + "'; known: tenants, sessions, rag, no-reuse");
	}

	private static TraceRequest request(double at, long[] prefix, int ownTokens, int output, IdSource ids) {
		int input = prefix.length * BLOCK + ownTokens;
		return new TraceRequest(at, input, output, extend(prefix, prefix.length, input, ids));
	}

	/**
	 * The first {@code kept} ids of {@code prefix}, then fresh ids up to {@code input}.
	 */
	private static long[] extend(long[] prefix, int kept, int input, IdSource ids) {
		long[] chain = new long[(input + BLOCK - 1) / BLOCK];
		System.arraycopy(prefix, 0, chain, 0, kept);
		for (int i = kept; i < chain.length; i++) {
			chain[i] = ids.next();
		}
		return chain;
	}

	private static void session(double start, long[] system, SplittableRandom random, IdSource ids,
			List<TraceRequest> out, long session) {
		int turns = random.nextInt(2, 9);
		double at = start;
		int prevInput = 0;
		int prevOutput = 0;
		long[] prevIds = system;
		for (int k = 0; k < turns; k++) {
			int user = random.nextInt(64, 1025);
			int input = k == 0 ? system.length * BLOCK + user : prevInput + prevOutput + user;
			if (input > MAX_SESSION_TOKENS) {
				return;
			}
			// Full blocks of the previous prompt are unchanged; its partial last block
			// now holds more tokens, so it and everything after are new.
			int kept = k == 0 ? system.length : prevInput / BLOCK;
			long[] chain = extend(prevIds, kept, input, ids);
			int output = random.nextInt(64, 513);
			out.add(new TraceRequest(at, input, output, chain, session));
			prevInput = input;
			prevOutput = output;
			prevIds = chain;
			at += exponential(random, 20_000.0);
		}
	}

	private static double nthEarliest(List<TraceRequest> all, int n) {
		return all.stream().mapToDouble(TraceRequest::timestampMillis).sorted().skip(n - 1).findFirst().orElseThrow();
	}

	/** A lognormal length of median {@code median}, clipped to [min, max]. */
	private static int lognormal(SplittableRandom random, int median, int min, int max) {
		double x = median * Math.exp(NO_REUSE_SIGMA * random.nextGaussian());
		return (int) Math.max(min, Math.min(max, Math.round(x)));
	}

	private static double exponential(SplittableRandom random, double meanMillis) {
		return -meanMillis * Math.log(1 - random.nextDouble());
	}

	/** Fresh block ids, unique within one generated trace. */
	static final class IdSource {

		private long next;

		long next() {
			return next++;
		}

		long[] fresh(int n) {
			long[] out = new long[n];
			for (int i = 0; i < n; i++) {
				out[i] = next++;
			}
			return out;
		}

	}

}
