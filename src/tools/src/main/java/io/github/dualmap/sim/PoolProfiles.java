package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

import io.github.dualmap.core.RingMember;
import io.github.dualmap.engine.EngineProfile;

/**
 * The engine profiles of a simulated pool ({@code --profile}): one profile for every
 * instance, or a mix of them, e.g. {@code h100-8b:4,a100-8b:4} for a pool of two GPU
 * generations. Instance {@code k} takes the profile whose share of the pool its index
 * falls in, in the order given (the first 4 instances h100, the next 4 A100); instances
 * that join later ({@code --scale}) continue the mix in turn ({@code k} modulo the pool's
 * size). An entry may give its instances a ring weight, as an operator does with the
 * {@code dualmap.weight} metadata ({@code h100-8b:4:2,a100-8b:4}: the H100s weigh 2).
 *
 * @param profiles the profiles, in the order given
 * @param counts how many instances of the pool each one is, in the same order
 * @param weights the ring weight of each one's instances, in the same order
 */
public record PoolProfiles(List<EngineProfile> profiles, List<Integer> counts, List<Double> weights) {

	public PoolProfiles {
		profiles = List.copyOf(profiles);
		counts = List.copyOf(counts);
		weights = List.copyOf(weights);
		if (profiles.isEmpty() || profiles.size() != counts.size() || profiles.size() != weights.size()) {
			throw new IllegalArgumentException("a pool needs a profile, and one count and one weight per profile: "
					+ profiles.size() + ", " + counts.size() + " and " + weights.size());
		}
		for (double w : weights) {
			if (!(w > 0 && w <= RingMember.MAX_WEIGHT)) {
				throw new IllegalArgumentException(
						"a ring weight must be > 0 and at most " + RingMember.MAX_WEIGHT + " but was " + w);
			}
		}
		for (int c : counts) {
			if (c <= 0) {
				throw new IllegalArgumentException("a profile's count must be > 0 but was " + c);
			}
		}
		int block = profiles.get(0).blockTokens();
		for (EngineProfile p : profiles) {
			if (p.blockTokens() != block) {
				throw new IllegalArgumentException("the profiles of a pool must share their KV block size, but "
						+ profiles.get(0).name() + " has " + block + " tokens and " + p.name() + " " + p.blockTokens());
			}
		}
	}

	/** Every one of {@code instances} instances of {@code profile}. */
	public static PoolProfiles of(EngineProfile profile, int instances) {
		return new PoolProfiles(List.of(profile), List.of(instances), List.of(1.0));
	}

	/**
	 * {@code --profile}: a built-in profile's name (every instance), or a comma-separated
	 * mix of {@code NAME:COUNT[:WEIGHT]} whose counts add up to {@code instances}.
	 * @throws IllegalArgumentException naming what is wrong with {@code spec}
	 */
	public static PoolProfiles parse(String spec, int instances) {
		String[] parts = spec.strip().split(",", -1);
		if (parts.length == 1 && !parts[0].contains(":")) {
			return of(EngineProfile.named(parts[0].strip()), instances);
		}
		List<EngineProfile> profiles = new ArrayList<>();
		List<Integer> counts = new ArrayList<>();
		List<Double> weights = new ArrayList<>();
		int total = 0;
		for (String part : parts) {
			String[] nameCount = part.strip().split(":", -1);
			if (nameCount.length < 2 || nameCount.length > 3 || nameCount[0].isBlank()) {
				throw new IllegalArgumentException("--profile of a mix takes NAME:COUNT[:WEIGHT] entries separated by "
						+ "commas, e.g. h100-8b:4,a100-8b:4, but got '" + part.strip() + "'");
			}
			String name = nameCount[0].strip();
			if (profiles.stream().anyMatch(p -> p.name().equals(name))) {
				throw new IllegalArgumentException("--profile names '" + name + "' twice");
			}
			int count;
			try {
				count = Integer.parseInt(nameCount[1].strip());
			}
			catch (NumberFormatException ex) {
				throw new IllegalArgumentException(
						"--profile: the count of " + name + " must be a whole number but was '" + nameCount[1] + "'");
			}
			if (count <= 0) {
				throw new IllegalArgumentException("--profile: the count of " + name + " must be > 0 but was " + count);
			}
			double weight = 1.0;
			if (nameCount.length == 3) {
				try {
					weight = Double.parseDouble(nameCount[2].strip());
				}
				catch (NumberFormatException ex) {
					weight = Double.NaN;
				}
				if (!(weight > 0 && weight <= RingMember.MAX_WEIGHT)) {
					throw new IllegalArgumentException("--profile: the weight of " + name + " must be a number above 0 "
							+ "and at most " + RingMember.MAX_WEIGHT + " but was '" + nameCount[2].strip() + "'");
				}
			}
			profiles.add(EngineProfile.named(name));
			counts.add(count);
			weights.add(weight);
			total = (int) Math.min(Integer.MAX_VALUE, (long) total + count);
		}
		if (total != instances) {
			throw new IllegalArgumentException("--profile " + spec.strip() + " makes a pool of " + total
					+ " instances, but --instances is " + instances);
		}
		return new PoolProfiles(profiles, counts, weights);
	}

	/** Whether the pool mixes profiles. */
	public boolean mixed() {
		return this.profiles.size() > 1;
	}

	/** The first profile given. */
	public EngineProfile first() {
		return this.profiles.get(0);
	}

	/** Instances the mix lays out before it starts again. */
	public int size() {
		return this.counts.stream().mapToInt(Integer::intValue).sum();
	}

	/** The profile of instance {@code index} (from 0). */
	public EngineProfile profileOf(int index) {
		return this.profiles.get(entryOf(index));
	}

	/** The ring weight of instance {@code index} (from 0). */
	public double weightOf(int index) {
		return this.weights.get(entryOf(index));
	}

	private int entryOf(int index) {
		if (index < 0) {
			throw new IllegalArgumentException("index must be >= 0 but was " + index);
		}
		int k = index % size();
		for (int i = 0; i < this.profiles.size(); i++) {
			k -= this.counts.get(i);
			if (k < 0) {
				return i;
			}
		}
		throw new IllegalStateException("unreachable: " + index + " in " + this);
	}

	/** Each profile changed by {@code change}, the counts as they are. */
	public PoolProfiles map(UnaryOperator<EngineProfile> change) {
		return new PoolProfiles(this.profiles.stream().map(change).toList(), this.counts, this.weights);
	}

	/** The largest KV cache of the pool's profiles, in tokens. */
	public long largestKvCapacityTokens() {
		return this.profiles.stream().mapToLong(EngineProfile::kvCapacityTokens).max().orElseThrow();
	}

	/**
	 * The name reports give the pool: the profile's, or the mix as {@code --profile}
	 * takes it.
	 */
	public String name() {
		if (!mixed()) {
			return first().name();
		}
		StringBuilder b = new StringBuilder();
		for (int i = 0; i < this.profiles.size(); i++) {
			b.append(i == 0 ? "" : ",").append(this.profiles.get(i).name()).append(':').append(this.counts.get(i));
			double w = this.weights.get(i);
			if (w != 1.0) {
				b.append(':').append(w == Math.rint(w) ? Long.toString((long) w) : Double.toString(w));
			}
		}
		return b.toString();
	}

}
