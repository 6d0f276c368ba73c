package io.github.dualmap.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;

/** {@code dualmap.metrics.*}. */
public class MetricsProperties {

	/**
	 * Upper bounds of the buckets of the dualmap.ttft and dualmap.queue.wait histograms.
	 * Every configured TTFT objective (dualmap.slo.ttft, dualmap.slo.classes.*.ttft,
	 * dualmap.pools.*.slo.ttft) is added to them, so SLO attainment reads exactly off a
	 * bucket. At most 20 bounds.
	 */
	@NotNull(message = "dualmap.metrics.latency-buckets must be set")
	@Size(max = 20, message = "dualmap.metrics.latency-buckets has at most 20 bounds")
	private List<Duration> latencyBuckets = new ArrayList<>(List.of(Duration.ofMillis(50), Duration.ofMillis(100),
			Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofSeconds(2),
			Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofSeconds(60)));

	@AssertTrue(message = "dualmap.metrics.latency-buckets must all be > 0")
	private boolean isLatencyBucketsPositive() {
		return this.latencyBuckets.stream().allMatch(d -> d != null && d.toNanos() > 0);
	}

	public List<Duration> getLatencyBuckets() {
		return this.latencyBuckets;
	}

	public void setLatencyBuckets(List<Duration> latencyBuckets) {
		this.latencyBuckets = latencyBuckets;
	}

}
