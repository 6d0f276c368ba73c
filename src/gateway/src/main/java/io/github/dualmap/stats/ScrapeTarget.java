package io.github.dualmap.stats;

import java.net.URI;

/**
 * One instance's metrics endpoint.
 *
 * @param instanceId the instance's id in its pool
 * @param metricsUri absolute http(s) URI of its Prometheus endpoint
 */
public record ScrapeTarget(String instanceId, URI metricsUri) {

	public ScrapeTarget {
		if (instanceId.isEmpty()) {
			throw new IllegalArgumentException("instanceId must not be empty");
		}
		String scheme = metricsUri.getScheme();
		if (!("http".equalsIgnoreCase(scheme) || "https".equalsIgnoreCase(scheme)) || metricsUri.getHost() == null) {
			throw new IllegalArgumentException("metricsUri must be an absolute http(s) URI but was " + metricsUri);
		}
	}

}
