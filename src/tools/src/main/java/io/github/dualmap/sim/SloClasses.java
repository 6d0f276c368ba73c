package io.github.dualmap.sim;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import net.openhft.hashing.LongHashFunction;
import org.jspecify.annotations.Nullable;

/**
 * TTFT objectives per request class for a simulated run, as the gateway's
 * {@code dualmap.slo.classes} give them: each request belongs to a class by a seeded hash
 * of its index, so a class is a random share of the trace, the same for every policy and
 * rate; requests left over keep the run's objective (class {@value #DEFAULT}).
 *
 * @param classes the named classes, each with its objective and share of requests
 */
public record SloClasses(List<SloClass> classes) {

	/** The class of requests no named class takes. */
	public static final String DEFAULT = "default";

	/** No classes: every request has the run's objective. */
	public static final SloClasses NONE = new SloClasses(List.of());

	/**
	 * One class.
	 *
	 * @param name its name
	 * @param slo its TTFT objective
	 * @param share the fraction of requests in it, in (0, 1]
	 * @param priority its priority band, as {@code dualmap.slo.classes.<name>.priority}
	 * gives it, or {@code null} for none (its requests take their tenant's band)
	 */
	public record SloClass(String name, Duration slo, double share, @Nullable Integer priority) {

		/** A class without a priority band of its own. */
		public SloClass(String name, Duration slo, double share) {
			this(name, slo, share, null);
		}

		public SloClass {
			if (name.isBlank() || name.equals(DEFAULT)) {
				throw new IllegalArgumentException("an SLO class needs a name other than '" + DEFAULT + "'");
			}
			if (slo.isNegative() || slo.isZero()) {
				throw new IllegalArgumentException("SLO class '" + name + "' needs an objective > 0 but has " + slo);
			}
			if (!(share > 0 && share <= 1)) {
				throw new IllegalArgumentException("SLO class '" + name + "' needs a share in (0, 1] but has " + share);
			}
		}

	}

	public SloClasses {
		classes = List.copyOf(classes);
		double total = 0;
		Set<String> names = new HashSet<>();
		for (SloClass c : classes) {
			total += c.share();
			if (!names.add(c.name())) {
				throw new IllegalArgumentException("SLO class '" + c.name() + "' is given twice");
			}
		}
		if (total > 1 + 1e-9) {
			throw new IllegalArgumentException("the shares of the SLO classes add up to " + total + ", more than 1");
		}
	}

	/**
	 * Parses {@code interactive=2s:0.2:1,batch=60s:0.3}: name, objective (as
	 * {@code --slo-ttft}), share of requests and, optionally, priority band of each
	 * class.
	 */
	public static SloClasses parse(String spec) {
		List<SloClass> classes = new ArrayList<>();
		for (String part : spec.split(",", -1)) {
			String p = part.strip();
			int eq = p.indexOf('=');
			String[] fields = eq <= 0 ? new String[0] : p.substring(eq + 1).split(":", -1);
			if (fields.length != 2 && fields.length != 3) {
				throw new IllegalArgumentException("--slo-classes takes NAME=DURATION:SHARE[:PRIORITY][,...], "
						+ "e.g. interactive=2s:0.2:1, but got '" + p + "'");
			}
			String name = p.substring(0, eq).strip();
			double share;
			try {
				share = Double.parseDouble(fields[1].strip());
			}
			catch (NumberFormatException ex) {
				throw new IllegalArgumentException(
						"--slo-classes: the share of '" + name + "' is not a number: '" + p + "'");
			}
			Integer priority = null;
			if (fields.length == 3) {
				try {
					priority = Integer.valueOf(fields[2].strip());
				}
				catch (NumberFormatException ex) {
					throw new IllegalArgumentException(
							"--slo-classes: the priority of '" + name + "' is not an integer: '" + p + "'");
				}
			}
			classes.add(new SloClass(name, DurationOption.parse("--slo-classes", fields[0]), share, priority));
		}
		return new SloClasses(classes);
	}

	public boolean isEmpty() {
		return classes.isEmpty();
	}

	/** Classes and the default one: {@link #classOf} returns an index below this. */
	public int count() {
		return classes.size() + 1;
	}

	/** The name of class {@code index} ({@link #DEFAULT} for the last). */
	public String name(int index) {
		return index < classes.size() ? classes.get(index).name() : DEFAULT;
	}

	/**
	 * The class of request {@code request} in a run seeded with {@code seed}: an index
	 * into {@link #classes()}, or {@code classes().size()} for the default class.
	 */
	public int classOf(int request, long seed) {
		double u = (LongHashFunction.xx3(seed ^ 0x5C0C1A55E5L).hashInt(request) >>> 11) * 0x1.0p-53;
		double upTo = 0;
		for (int c = 0; c < classes.size(); c++) {
			upTo += classes.get(c).share();
			if (u < upTo) {
				return c;
			}
		}
		return classes.size();
	}

	/**
	 * The priority band of class {@code index}, {@code null} when it sets none (and for
	 * the default class).
	 */
	public @Nullable Integer priority(int index) {
		return index < classes.size() ? classes.get(index).priority() : null;
	}

	/**
	 * The objective of class {@code index}, the run's {@code defaultSloNanos} for the
	 * last.
	 */
	public long sloNanos(int index, long defaultSloNanos) {
		return index < classes.size() ? classes.get(index).slo().toNanos() : defaultSloNanos;
	}

}
