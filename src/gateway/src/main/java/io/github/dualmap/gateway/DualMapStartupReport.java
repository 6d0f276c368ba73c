package io.github.dualmap.gateway;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.route.RouteLocator;
import org.springframework.context.ApplicationListener;

/**
 * Says at start-up, once the application is ready, which pools DualMap took over (one
 * INFO line each: policy, dispatch mode, instances found), and warns about the two ways a
 * service name silently escapes it: a {@code dualmap.services} entry that no
 * {@code lb://} route sends to, and an {@code lb://} route whose service is not in
 * {@code dualmap.services} (Spring Cloud LoadBalancer's round robin balances it).
 */
public class DualMapStartupReport implements ApplicationListener<ApplicationReadyEvent> {

	private static final Log logger = LogFactory.getLog(DualMapStartupReport.class);

	/** How long the routes may take to be read before the check is given up. */
	static final Duration ROUTES_TIMEOUT = Duration.ofSeconds(10);

	private final DualMapRegistry registry;

	private final RouteLocator routes;

	public DualMapStartupReport(DualMapRegistry registry, RouteLocator routes) {
		this.registry = registry;
		this.routes = routes;
	}

	@Override
	public void onApplicationEvent(ApplicationReadyEvent event) {
		for (ServicePool pool : this.registry.pools().values()) {
			logger.info("DualMap routes pool '" + pool.serviceId() + "': policy " + pool.policyName()
					+ ", dispatch mode " + pool.queues().settings().mode().value() + ", "
					+ pool.serviceInstances().size() + " instances found");
		}
		List<Route> all;
		try {
			all = this.routes.getRoutes().collectList().block(ROUTES_TIMEOUT);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not read the gateway's routes to check them against dualmap.services: " + ex);
			return;
		}
		check(all == null ? List.of() : all);
	}

	private void check(List<Route> all) {
		// Service id -> the routes that send to it.
		Map<String, List<String>> balanced = new LinkedHashMap<>();
		for (Route route : all) {
			String service = loadBalancedService(route.getUri());
			if (service != null) {
				balanced.computeIfAbsent(service, k -> new ArrayList<>()).add(route.getId());
			}
		}
		Set<String> pools = new LinkedHashSet<>(this.registry.pools().keySet());
		for (String service : pools) {
			if (!balanced.containsKey(service)) {
				logger.warn("dualmap.services lists '" + service + "' but no route sends to lb://" + service
						+ ": DualMap routes no request there" + (balanced.isEmpty() ? ""
								: " (routes send to lb://" + String.join(", lb://", balanced.keySet()) + ")"));
			}
		}
		balanced.forEach((service, routeIds) -> {
			if (!pools.contains(service)) {
				logger.warn("Route" + (routeIds.size() == 1 ? " '" : "s '") + String.join("', '", routeIds) + "' send"
						+ (routeIds.size() == 1 ? "s" : "") + " to lb://" + service
						+ ", which is not in dualmap.services: Spring Cloud LoadBalancer balances it (round robin),"
						+ " not DualMap, and no x-dualmap-* header is added");
			}
		});
	}

	/**
	 * The service id of an {@code lb://} URI, as the load balancer filter reads it;
	 * {@code null} for any other URI.
	 */
	static @Nullable String loadBalancedService(@Nullable URI uri) {
		if (uri == null || !"lb".equalsIgnoreCase(uri.getScheme())) {
			return null;
		}
		return uri.getHost() != null ? uri.getHost() : uri.getAuthority();
	}

}
