package io.github.dualmap.stats;

import java.net.URI;

/**
 * One instance's metrics endpoint.
 *
 * @param instanceId the instance's id in its pool
 * @param metricsUri where its Prometheus text is served
 */
public record ScrapeTarget(String instanceId, URI metricsUri) {
}
