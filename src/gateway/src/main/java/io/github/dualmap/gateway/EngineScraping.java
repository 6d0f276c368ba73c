package io.github.dualmap.gateway;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.stats.MetricsScraper;
import io.github.dualmap.stats.ScrapeAnsweredException;
import io.github.dualmap.stats.ScrapeListener;
import io.github.dualmap.stats.ScrapeTarget;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.context.SmartLifecycle;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * Keeps a {@link MetricsScraper} pointed at the current instances of every DualMap
 * service and feeds what it scrapes into the pools. A failed or unparsable scrape marks
 * the instance's engine view unknown and is counted. Scrapes are also how a hung instance
 * is found: one from which nothing has come (no scrape answered, even with an error
 * status, and no response byte) for {@code unresponsiveAfter} gets no new requests until
 * it answers again. A scrape that succeeds after failed ones lets an open circuit breaker
 * probe its instance at once ({@link InstanceBreakers#scrapeSucceeded}).
 */
public class EngineScraping implements SmartLifecycle, ScrapeListener, DualMapListener {

	private static final Log logger = LogFactory.getLog(EngineScraping.class);

	private final DualMapRegistry registry;

	private final Supplier<MetricsScraper> scrapers;

	private final Function<String, String> servicePaths;

	private final String pathMetadataKey;

	private final long unresponsiveAfterNanos;

	private volatile @Nullable MetricsScraper scraper;

	/**
	 * @param scrapers creates the scraper on start; it reports to this object
	 * @param servicePaths the metrics path of a service id
	 * @param pathMetadataKey instance metadata key overriding the path of one instance
	 */
	public EngineScraping(DualMapRegistry registry, Function<ScrapeListener, MetricsScraper> scrapers,
			Function<String, String> servicePaths, String pathMetadataKey) {
		this(registry, scrapers, servicePaths, pathMetadataKey, Duration.ZERO);
	}

	/**
	 * @param unresponsiveAfter silence after which an instance gets no new requests
	 * ({@link Duration#ZERO}: never)
	 */
	public EngineScraping(DualMapRegistry registry, Function<ScrapeListener, MetricsScraper> scrapers,
			Function<String, String> servicePaths, String pathMetadataKey, Duration unresponsiveAfter) {
		if (unresponsiveAfter.isNegative()) {
			throw new IllegalArgumentException("unresponsiveAfter must be >= 0 but was " + unresponsiveAfter);
		}
		this.registry = registry;
		this.scrapers = () -> scrapers.apply(this);
		this.servicePaths = servicePaths;
		this.pathMetadataKey = pathMetadataKey;
		this.unresponsiveAfterNanos = unresponsiveAfter.toNanos();
	}

	@Override
	public synchronized void start() {
		if (this.scraper != null) {
			return;
		}
		MetricsScraper started = this.scrapers.get();
		this.scraper = started;
		this.registry.addListener(this);
		for (ServicePool service : this.registry.services().values()) {
			started.targets(service.serviceId(), targets(service.serviceId(), service.serviceInstances()));
		}
	}

	@Override
	public synchronized void stop() {
		MetricsScraper running = this.scraper;
		if (running != null) {
			this.registry.removeListener(this);
			running.close();
			this.scraper = null;
		}
	}

	@Override
	public boolean isRunning() {
		return this.scraper != null;
	}

	@Override
	public int getPhase() {
		return DualMapLifecycle.PHASE;
	}

	@Override
	public void onMembershipChanged(String service, List<ServiceInstance> instances) {
		MetricsScraper running = this.scraper;
		if (running != null) {
			running.targets(service, targets(service, instances));
		}
	}

	List<ScrapeTarget> targets(String service, List<ServiceInstance> instances) {
		List<ScrapeTarget> targets = new ArrayList<>(instances.size());
		for (ServiceInstance i : instances) {
			String own = InstanceMetadata.get(i, this.pathMetadataKey);
			String path = own != null ? own : this.servicePaths.apply(service);
			targets.add(new ScrapeTarget(ServicePool.instanceId(i), metricsUri(i.getUri(), path)));
		}
		return targets;
	}

	static URI metricsUri(URI instance, String path) {
		return UriComponentsBuilder.fromUri(instance).replacePath(path).replaceQuery(null).build().toUri();
	}

	@Override
	public void onSnapshot(String pool, String instanceId, EngineSnapshot snapshot) {
		ServicePool service = this.registry.service(pool);
		if (service == null) {
			return;
		}
		InstanceState state = service.instancePool().instance(instanceId);
		if (state != null) {
			state.updateEngine(snapshot);
		}
		service.heard(instanceId);
		service.breakers().scrapeSucceeded(instanceId);
	}

	/**
	 * Whether a failed scrape still came from a live server: an error status or an
	 * oversized body, or a body that did not parse (not an I/O failure at all).
	 */
	static boolean answered(Throwable failure) {
		return failure instanceof ScrapeAnsweredException || !(failure instanceof IOException);
	}

	@Override
	public void onFailure(String pool, String instanceId, Throwable failure) {
		ServicePool service = this.registry.service(pool);
		if (service == null) {
			return;
		}
		InstanceState state = service.instancePool().instance(instanceId);
		if (state != null) {
			state.markEngineUnknown();
		}
		service.countScrapeFailure(instanceId);
		service.breakers().scrapeFailed(instanceId);
		if (answered(failure)) {
			service.heard(instanceId);
		}
		else if (this.unresponsiveAfterNanos > 0) {
			service.unanswered(instanceId, this.unresponsiveAfterNanos, failure);
		}
		if (logger.isDebugEnabled()) {
			logger.debug("Scraping " + instanceId + " of " + pool + " failed: " + failure);
		}
		for (DualMapListener l : service.listeners()) {
			l.onScrapeFailure(pool, instanceId, failure);
		}
	}

}
