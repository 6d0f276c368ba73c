package io.github.dualmap.sim;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import io.github.dualmap.core.DualHashRing;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The {@code churn} command of the exec jar: measures with {@link RingChurn} how many
 * routing keys move when one instance joins or leaves a pool of N, for the dual rings,
 * one ring and hash-mod-N; prints a markdown table and writes {@code churn.json}. Bad
 * input ends with exit code 2 and one line saying what is wrong.
 */
@Command(name = "churn", mixinStandardHelpOptions = true, sortOptions = false,
		description = "Share of routing keys that move when one instance joins or leaves.")
public final class ChurnCommand extends ConsoleCommand<ChurnCommand> {

	/** File written into {@code --out}. */
	public static final String JSON_FILE = "churn.json";

	private static final JsonMapper JSON = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();

	@Option(names = "--instances", defaultValue = "8,32,128", split = ",", paramLabel = "N[,N...]",
			description = "pool sizes before the change (default ${DEFAULT-VALUE})")
	List<Integer> instances = new ArrayList<>();

	@Option(names = "--keys", defaultValue = "1000000", description = "random 64-bit keys (default ${DEFAULT-VALUE})")
	int keys;

	@Option(names = "--removals", defaultValue = "8",
			description = "removed instances the remove-one numbers average over (default ${DEFAULT-VALUE}, at most N)")
	int removals;

	@Option(names = "--virtual-nodes", defaultValue = "160",
			description = "virtual nodes per instance on each ring, 1 to 10000 (default ${DEFAULT-VALUE})")
	int virtualNodes;

	@Option(names = "--seed", defaultValue = "42", description = "seed of the keys (default ${DEFAULT-VALUE})")
	long seed;

	@Option(names = "--out", paramLabel = "DIR", description = "write " + JSON_FILE + " here")
	@Nullable Path out;

	public ChurnCommand() {
		super("churn");
	}

	/** Runs the command with {@code args}; returns the exit code. */
	public static int run(String... args) {
		return new ChurnCommand().runWith(args);
	}

	@Override
	public Integer call() {
		try {
			if (out != null) {
				writableDirectory("--out", out);
			}
			List<RingChurn.Change> changes = measure();
			if (out != null) {
				Files.writeString(out.resolve(JSON_FILE),
						JSON.writeValueAsString(toJson(changes, virtualNodes, seed)) + "\n");
			}
			stdout.print(markdown(changes));
			stdout.flush();
			return 0;
		}
		catch (IllegalArgumentException ex) {
			stderr.println("churn: " + ex.getMessage());
			return USAGE;
		}
		catch (IOException ex) {
			stderr.println("churn: cannot write " + JSON_FILE + ": " + ex.getMessage());
			return USAGE;
		}
	}

	private List<RingChurn.Change> measure() {
		if (instances.isEmpty()) {
			throw new IllegalArgumentException("--instances names no pool size");
		}
		for (int n : instances) {
			if (n < 2) {
				throw new IllegalArgumentException("--instances must all be >= 2 but one was " + n);
			}
		}
		if (keys <= 0) {
			throw new IllegalArgumentException("--keys must be > 0 but was " + keys);
		}
		if (removals <= 0) {
			throw new IllegalArgumentException("--removals must be > 0 but was " + removals);
		}
		if (virtualNodes <= 0 || virtualNodes > DualHashRing.MAX_VIRTUAL_NODES) {
			// Above the bound a ring would be scaled down (or run out of memory), and the
			// report would name a count it did not use.
			throw new IllegalArgumentException("--virtual-nodes must be between 1 and " + DualHashRing.MAX_VIRTUAL_NODES
					+ " (per unit of weight) but was " + virtualNodes);
		}
		RingChurn churn = new RingChurn(virtualNodes);
		List<RingChurn.Change> changes = new ArrayList<>();
		for (int n : instances) {
			changes.add(churn.add(n, keys, seed));
			changes.add(churn.remove(n, keys, Math.min(removals, n), seed));
		}
		return changes;
	}

	static String markdown(List<RingChurn.Change> changes) {
		StringBuilder sb = new StringBuilder();
		sb.append("| change | dual rings: pair changed | dual rings: first candidate changed "
				+ "| dual rings: both candidates lost | both ring homes moved | one ring: home moved "
				+ "| hash-mod-N: home moved |\n");
		sb.append("|---|---:|---:|---:|---:|---:|---:|\n");
		for (RingChurn.Change c : changes) {
			sb.append(String.format(Locale.ROOT, "| %d → %d | %s | %s | %s | %s | %s | %s |%n", c.from(), c.to(),
					percent(c.pairChanged()), percent(c.firstChanged()), percent(c.bothLost()),
					percent(c.bothHomesMoved()), percent(c.firstChanged()), percent(c.modNMoved())));
		}
		return sb.toString();
	}

	private static String percent(double share) {
		return String.format(Locale.ROOT, "%.3f %%", 100 * share);
	}

	static ObjectNode toJson(List<RingChurn.Change> changes, int virtualNodes, long seed) {
		ObjectNode root = JSON.createObjectNode();
		root.put("virtual_nodes", virtualNodes);
		root.put("seed", seed);
		ArrayNode list = root.putArray("changes");
		for (RingChurn.Change c : changes) {
			ObjectNode o = list.addObject();
			o.put("kind", c.kind().label());
			o.put("from", c.from());
			o.put("to", c.to());
			o.put("keys", c.keys());
			o.put("pair_changed", c.pairChanged());
			o.put("first_changed", c.firstChanged());
			o.put("both_lost", c.bothLost());
			o.put("both_homes_moved", c.bothHomesMoved());
			o.put("one_ring_moved", c.firstChanged());
			o.put("mod_n_moved", c.modNMoved());
		}
		return root;
	}

}
