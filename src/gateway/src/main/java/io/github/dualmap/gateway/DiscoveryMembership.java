package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.context.SmartLifecycle;

/**
 * Follows each DualMap service's {@link ServiceInstanceListSupplier} from application
 * start: every list it emits updates the pool's membership (rings, scrape targets, and
 * the re-routing of a removed instance's queue), and a supplier that completes after one
 * list, as the discovery-client ones do, is read again every refresh interval. Without
 * this the membership would be learned on the first request, and a removed instance's
 * queued requests would wait for the next arrival to be re-routed.
 */
public class DiscoveryMembership implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(DiscoveryMembership.class);

	private final DualMapRegistry registry;

	private final Function<String, @Nullable ServiceInstanceListSupplier> suppliers;

	private final Duration refresh;

	private final List<Disposable> subscriptions = new ArrayList<>();

	private volatile boolean running;

	/**
	 * @param suppliers the supplier of a service id (from the load balancer's child
	 * context), {@code null} when there is none
	 * @param refresh delay before a completed supplier is read again
	 */
	public DiscoveryMembership(DualMapRegistry registry,
			Function<String, @Nullable ServiceInstanceListSupplier> suppliers, Duration refresh) {
		if (refresh.toMillis() < 1) {
			throw new IllegalArgumentException("refresh interval must be >= 1ms but was " + refresh);
		}
		this.registry = registry;
		this.suppliers = suppliers;
		this.refresh = refresh;
	}

	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		for (ServicePool service : this.registry.services().values()) {
			ServiceInstanceListSupplier supplier = this.suppliers.apply(service.serviceId());
			if (supplier == null) {
				logger.warn("No ServiceInstanceListSupplier for '" + service.serviceId()
						+ "': its membership is learned on its first request");
				continue;
			}
			Disposable.Swap following = Disposables.swap();
			this.subscriptions.add(following);
			follow(service, supplier, following);
		}
		this.running = true;
	}

	private void follow(ServicePool service, ServiceInstanceListSupplier supplier, Disposable.Swap following) {
		following.update(Flux.defer(supplier::get)
			.repeatWhen(done -> done.delayElements(this.refresh))
			.doOnError(ex -> logger.warn("Reading the instances of '" + service.serviceId() + "' failed", ex))
			.retryWhen(Retry.fixedDelay(Long.MAX_VALUE, this.refresh))
			.subscribe(instances -> apply(service, instances, () -> following
				.update(Mono.delay(this.refresh).subscribe(tick -> follow(service, supplier, following))))));
	}

	/**
	 * Applies one list. Whatever that throws is logged and the next refresh goes on: an
	 * error escaping here would end the subscription for good, and membership changes
	 * would then wait for a request. A JVM-fatal error (out of memory, stack overflow) is
	 * still rethrown, as Reactor wants, which leaves the subscription dead; a new one
	 * follows the instances again after a refresh interval.
	 */
	private void apply(ServicePool service, List<ServiceInstance> instances, Runnable restart) {
		try {
			service.updateMembership(instances);
		}
		catch (Throwable ex) {
			if (Exceptions.isJvmFatal(ex)) {
				logger.error("Updating the membership of '" + service.serviceId()
						+ "' failed; following its instances again in " + this.refresh, ex);
				restart.run();
				Exceptions.throwIfJvmFatal(ex);
			}
			logger.warn("Updating the membership of '" + service.serviceId() + "' failed", ex);
		}
	}

	@Override
	public synchronized void stop() {
		this.subscriptions.forEach(Disposable::dispose);
		this.subscriptions.clear();
		this.running = false;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return DualMapLifecycle.PHASE;
	}

}
