package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

import org.springframework.context.SmartLifecycle;

/**
 * Drives the time-based work of every pool's dispatch queues: expiry of requests that
 * waited too long, the estimated end of prefill of non-streaming requests, and the
 * wait-bound hotspot test. Events (arrivals, first bytes, completions) do the rest; the
 * tick covers what no event would trigger. Runs on Reactor's parallel scheduler from
 * start to stop.
 */
public class DispatchTicker implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(DispatchTicker.class);

	private final DualMapRegistry registry;

	private final Duration interval;

	private volatile @Nullable Disposable task;

	public DispatchTicker(DualMapRegistry registry, Duration interval) {
		if (interval.toMillis() < 1) {
			throw new IllegalArgumentException("tick interval must be >= 1ms but was " + interval);
		}
		this.registry = registry;
		this.interval = interval;
	}

	@Override
	public synchronized void start() {
		if (this.task == null) {
			long ms = this.interval.toMillis();
			this.task = Schedulers.parallel().schedulePeriodically(this::tick, ms, ms, TimeUnit.MILLISECONDS);
		}
	}

	/** One pass over every pool; public so tests can drive it without waiting. */
	public void tick() {
		for (ServicePool service : this.registry.services().values()) {
			try {
				service.queues().tick(service.instancePool().now());
			}
			catch (RuntimeException ex) {
				// A periodic task that throws is cancelled: log and keep ticking.
				logger.warn("Dispatch tick of '" + service.serviceId() + "' failed", ex);
			}
		}
	}

	@Override
	public synchronized void stop() {
		Disposable running = this.task;
		if (running != null) {
			running.dispose();
			this.task = null;
		}
	}

	@Override
	public boolean isRunning() {
		return this.task != null;
	}

	@Override
	public int getPhase() {
		return DualMapLifecycle.PHASE;
	}

}
