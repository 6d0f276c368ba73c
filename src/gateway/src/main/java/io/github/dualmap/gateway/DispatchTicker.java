package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dualmap.core.DispatchQueues;
import io.github.dualmap.core.InstancePool;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.context.SmartLifecycle;

/**
 * Drives the time-based work of every pool's dispatch queues: expiry of requests that
 * waited too long, the estimated end of prefill of non-streaming requests, the wait-bound
 * hotspot test and the queue's moves on their interval. Events (arrivals, first bytes,
 * completions) do the rest; the tick covers what no event would trigger.
 * <p>
 * Each tick runs at the earliest deadline the pools name
 * ({@link DispatchQueues#nextDeadlineNanos()}, {@link DispatchQueues#tickAt}), and no
 * later than {@code interval} after the last, as the simulator ticks them; a pool that
 * sets an earlier deadline between ticks (a non-streaming request's estimated end of
 * prefill, {@link DispatchQueues#onEarlierDeadline}) brings the next tick forward to it.
 * So a non-streaming request's prefill budget is handed on at its estimate, not up to an
 * interval later. Ticks start at least {@link #MIN_SPACING_NANOS} apart, so a pool
 * releasing non-streaming requests by the thousand per second does not tick as often.
 * Runs on Reactor's parallel scheduler from start to stop.
 */
public class DispatchTicker implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(DispatchTicker.class);

	private final DualMapRegistry registry;

	private final long intervalNanos;

	/**
	 * Least time from one tick's start to the next: deadlines closer together than this
	 * are handled by one tick (a pool releasing many non-streaming requests sets an
	 * estimated end of prefill per request).
	 */
	static final long MIN_SPACING_NANOS = DispatchQueues.RETICK_NANOS;

	private final Scheduler scheduler = Schedulers.parallel();

	// Guarded by this: which scheduled tick is the current one (a tick brought forward
	// supersedes the one scheduled before, which then does nothing when it comes; it is
	// not cancelled, which would interrupt it if it had begun), and when it runs
	// (System.nanoTime).
	private long generation;

	private volatile long nextTickAtNanos = Long.MAX_VALUE;

	private long lastTickAtNanos = Long.MIN_VALUE / 2;

	// Scheduled ticks run so far (tests read it).
	private final AtomicLong ticks = new AtomicLong();

	private volatile boolean running;

	public DispatchTicker(DualMapRegistry registry, Duration interval) {
		if (interval.toMillis() < 1) {
			throw new IllegalArgumentException("tick interval must be >= 1ms but was " + interval);
		}
		this.registry = registry;
		this.intervalNanos = interval.toNanos();
	}

	@Override
	public synchronized void start() {
		if (this.running) {
			return;
		}
		this.running = true;
		for (ServicePool service : this.registry.services().values()) {
			InstancePool pool = service.instancePool();
			service.queues().onEarlierDeadline(at -> wakeAt(at - pool.now()));
		}
		scheduleAt(System.nanoTime() + nanosToNextTick());
	}

	/** One pass over every pool; public so tests can drive it without waiting. */
	public void tick() {
		for (ServicePool service : this.registry.services().values()) {
			try {
				service.queues().tick(service.instancePool().now());
			}
			catch (RuntimeException ex) {
				// A failing pool must not stop the ticks of the others, or its own next.
				logger.warn("Dispatch tick of '" + service.serviceId() + "' failed", ex);
			}
		}
	}

	/**
	 * How long from now the next tick is due: the earliest deadline of any pool, at most
	 * the interval.
	 */
	long nanosToNextTick() {
		long delay = this.intervalNanos;
		for (ServicePool service : this.registry.services().values()) {
			try {
				long now = service.instancePool().now();
				long at = DispatchQueues.tickAt(service.queues().nextDeadlineNanos(), now);
				if (at != Long.MAX_VALUE) {
					delay = Math.min(delay, at - now);
				}
			}
			catch (RuntimeException ex) {
				logger.warn("Next dispatch deadline of '" + service.serviceId() + "' failed", ex);
			}
		}
		return Math.max(0, delay);
	}

	private void run(long scheduled) {
		synchronized (this) {
			if (!this.running || scheduled != this.generation) {
				return;
			}
			this.nextTickAtNanos = Long.MAX_VALUE;
			this.lastTickAtNanos = System.nanoTime();
		}
		long delay = this.intervalNanos;
		this.ticks.incrementAndGet();
		try {
			tick();
			delay = nanosToNextTick();
		}
		finally {
			// Unless a deadline set while this tick ran brought the next one forward
			// already.
			long at = System.nanoTime() + delay;
			synchronized (this) {
				if (this.running && at < this.nextTickAtNanos) {
					scheduleAt(at);
				}
			}
		}
	}

	// Brings the next tick forward to delayNanos from now when that is earlier.
	private void wakeAt(long delayNanos) {
		long at = System.nanoTime() + Math.max(0, delayNanos);
		if (at >= this.nextTickAtNanos) {
			return;
		}
		synchronized (this) {
			if (this.running && at < this.nextTickAtNanos) {
				scheduleAt(at);
			}
		}
	}

	// Guarded by this: the next tick at atNanos (System.nanoTime), or MIN_SPACING_NANOS
	// after the last when that is later.
	private void scheduleAt(long atNanos) {
		long at = Math.max(atNanos, this.lastTickAtNanos + MIN_SPACING_NANOS);
		if (at >= this.nextTickAtNanos) {
			return;
		}
		long scheduled = ++this.generation;
		try {
			this.scheduler.schedule(() -> run(scheduled), Math.max(0, at - System.nanoTime()), TimeUnit.NANOSECONDS);
			this.nextTickAtNanos = at;
		}
		catch (RejectedExecutionException ex) {
			// The scheduler is shutting down with the application.
			this.nextTickAtNanos = Long.MAX_VALUE;
			logger.warn("Dispatch ticks stopped: the scheduler refused the next one", ex);
		}
	}

	@Override
	public synchronized void stop() {
		// The scheduled tick finds itself superseded and does nothing.
		this.running = false;
		this.generation++;
		this.nextTickAtNanos = Long.MAX_VALUE;
	}

	/** How many scheduled ticks have run since this ticker was made. */
	long ticks() {
		return this.ticks.get();
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
