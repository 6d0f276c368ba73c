package io.github.dualmap.sim.trace;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Zipf popularity over ranks {@code 0..n-1}: rank {@code k} has weight
 * {@code 1 / (k + 1)^exponent}. Sampling inverts the cumulative distribution by binary
 * search.
 */
final class ZipfDistribution {

	private final double[] cumulative;

	ZipfDistribution(int n, double exponent) {
		if (n <= 0) {
			throw new IllegalArgumentException("n must be > 0 but was " + n);
		}
		if (!(exponent >= 0)) {
			throw new IllegalArgumentException("exponent must be >= 0 but was " + exponent);
		}
		cumulative = new double[n];
		double sum = 0;
		for (int k = 0; k < n; k++) {
			sum += 1.0 / Math.pow(k + 1, exponent);
			cumulative[k] = sum;
		}
		for (int k = 0; k < n; k++) {
			cumulative[k] /= sum;
		}
	}

	/** Probability of rank {@code k}. */
	double probability(int k) {
		return k == 0 ? cumulative[0] : cumulative[k] - cumulative[k - 1];
	}

	int sample(SplittableRandom random) {
		int i = Arrays.binarySearch(cumulative, random.nextDouble());
		int k = i >= 0 ? i : -i - 1;
		return Math.min(k, cumulative.length - 1);
	}

}
