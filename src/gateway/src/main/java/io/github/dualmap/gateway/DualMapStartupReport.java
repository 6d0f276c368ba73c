package io.github.dualmap.gateway;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.regex.Pattern;

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
 * <p>
 * Routes that the gateway's discovery locator made (one per discovered service, so
 * usually many that are no LLM pool) are not warned about one by one: they are listed in
 * one INFO line.
 */
public class DualMapStartupReport implements ApplicationListener<ApplicationReadyEvent> {

	private static final Log logger = LogFactory.getLog(DualMapStartupReport.class);

	/** How long the routes may take to be read before the check is given up. */
	static final Duration ROUTES_TIMEOUT = Duration.ofSeconds(10);

	/** The discovery locator's route ids without a configured prefix. */
	private static final Pattern DEFAULT_DISCOVERY_ROUTE_ID = Pattern.compile("^\\w*DiscoveryClient_");

	private final DualMapRegistry registry;

	private final RouteLocator routes;

	private final @Nullable Predicate<String> discoveryRoute;

	public DualMapStartupReport(DualMapRegistry registry, RouteLocator routes) {
		this(registry, routes, null);
	}

	/**
	 * @param discoveryRoute tells the ids of the routes the discovery locator made, or
	 * {@code null} when the locator is off
	 */
	public DualMapStartupReport(DualMapRegistry registry, RouteLocator routes,
			@Nullable Predicate<String> discoveryRoute) {
		this.registry = registry;
		this.routes = routes;
		this.discoveryRoute = discoveryRoute;
	}

	/**
	 * The ids of the discovery locator's routes: its configured prefix, or the one it
	 * uses by default (the discovery client's class name and an underscore).
	 */
	public static Predicate<String> discoveryRoutes(@Nullable String routeIdPrefix) {
		if (routeIdPrefix != null && !routeIdPrefix.isBlank()) {
			return id -> id.startsWith(routeIdPrefix);
		}
		return DEFAULT_DISCOVERY_ROUTE_ID.asPredicate();
	}

	@Override
	public void onApplicationEvent(ApplicationReadyEvent event) {
		for (ServicePool pool : this.registry.services().values()) {
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
		Set<String> pools = new LinkedHashSet<>(this.registry.services().keySet());
		for (String service : pools) {
			if (!balanced.containsKey(service)) {
				logger.warn("dualmap.services lists '" + service + "' but no route sends to lb://" + service
						+ ": DualMap routes no request there" + (balanced.isEmpty() ? ""
								: " (routes send to lb://" + String.join(", lb://", balanced.keySet()) + ")"));
			}
		}
		Set<String> discovered = new TreeSet<>();
		balanced.forEach((service, routeIds) -> {
			if (!pools.contains(service) && this.discoveryRoute != null) {
				if (routeIds.removeIf(this.discoveryRoute)) {
					discovered.add(service);
				}
			}
			if (!pools.contains(service) && !routeIds.isEmpty()) {
				logger.warn("Route" + (routeIds.size() == 1 ? " '" : "s '") + String.join("', '", routeIds) + "' send"
						+ (routeIds.size() == 1 ? "s" : "") + " to lb://" + service
						+ ", which is not in dualmap.services: Spring Cloud LoadBalancer balances it (round robin),"
						+ " not DualMap, and no x-dualmap-* header is added");
			}
		});
		if (!discovered.isEmpty()) {
			logger.info("The discovery locator's routes to lb://" + String.join(", lb://", discovered)
					+ " are balanced by Spring Cloud LoadBalancer, not DualMap (list a service in dualmap.services"
					+ " to route it with DualMap)");
		}
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
