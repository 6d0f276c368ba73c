package io.github.dualmap.emulator;

import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.github.dualmap.engine.Engine;
import io.github.dualmap.engine.EngineRequest;
import io.github.dualmap.engine.EngineStats;
import io.github.dualmap.engine.RequestProgress;
import io.github.dualmap.engine.StepResult;
import reactor.core.publisher.Flux;

/**
 * Runs one {@link Engine} in scaled real time on its own thread: steps, sleeps the step's
 * duration divided by the time scale, then delivers the step's tokens. The engine is
 * touched only by this thread; HTTP threads talk to it through an inbox, and read a stats
 * snapshot published after every step.
 */
public final class EngineDriver implements AutoCloseable {

	private static final long IDLE_PARK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

	private final Engine engine;

	private final double timeScale;

	private final long wallOrigin = System.nanoTime();

	private final Queue<Runnable> inbox = new ConcurrentLinkedQueue<>();

	private final Map<String, TokenListener> listeners = new HashMap<>();

	private final Thread thread;

	private volatile EngineStats stats;

	private volatile boolean stopped;

	public EngineDriver(Engine engine, double timeScale, String name) {
		if (!(timeScale > 0) || Double.isInfinite(timeScale)) {
			throw new IllegalArgumentException("timeScale must be a positive finite number but was " + timeScale);
		}
		this.engine = engine;
		this.timeScale = timeScale;
		this.stats = engine.stats();
		this.thread = new Thread(this::run, name);
		this.thread.setDaemon(true);
		this.thread.start();
	}

	/** Engine time now: wall time since start, multiplied by the time scale. */
	long modelNanos() {
		return (long) ((System.nanoTime() - wallOrigin) * timeScale);
	}

	/** The engine's state after its last step. */
	public EngineStats stats() {
		return stats;
	}

	/**
	 * Submits {@code request}; the flux emits one event per generated token and completes
	 * after the last. Cancelling it aborts the request in the engine.
	 */
	public Flux<TokenEvent> generate(EngineRequest request) {
		return Flux.create(sink -> {
			sink.onCancel(() -> post(() -> {
				listeners.remove(request.id());
				engine.abort(request.id());
			}));
			post(() -> {
				try {
					engine.submit(request, modelNanos());
					listeners.put(request.id(), (event) -> {
						sink.next(event);
						if (event.last()) {
							sink.complete();
						}
					});
				}
				catch (IllegalArgumentException ex) {
					sink.error(ex);
				}
			});
		});
	}

	private void post(Runnable action) {
		inbox.add(action);
		LockSupport.unpark(thread);
	}

	private void run() {
		while (!stopped) {
			for (Runnable action; (action = inbox.poll()) != null;) {
				action.run();
			}
			if (!engine.hasWork()) {
				stats = engine.stats();
				LockSupport.parkNanos(IDLE_PARK_NANOS);
				continue;
			}
			StepResult step = engine.step(Math.max(modelNanos(), engine.nextStepStartNanos()));
			stats = engine.stats();
			sleepUntil(step.endNanos());
			for (RequestProgress p : step.emitted()) {
				TokenListener listener = p.finished() ? listeners.remove(p.id()) : listeners.get(p.id());
				if (listener != null) {
					listener.on(new TokenEvent(p.outputTokens(), p.cachedTokens(), p.request().promptTokens(),
							p.finished()));
				}
			}
		}
	}

	private void sleepUntil(long modelNanos) {
		while (!stopped) {
			long wait = (long) ((modelNanos - modelNanos()) / timeScale);
			if (wait <= 0) {
				return;
			}
			LockSupport.parkNanos(wait);
		}
	}

	@Override
	public void close() {
		stopped = true;
		LockSupport.unpark(thread);
		try {
			thread.join(TimeUnit.SECONDS.toMillis(5));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@FunctionalInterface
	private interface TokenListener {

		void on(TokenEvent event);

	}

	/**
	 * One generated token of a request.
	 *
	 * @param index 1-based index of the token
	 * @param cachedTokens prompt tokens served from the prefix cache
	 * @param promptTokens prompt tokens
	 * @param last whether this was the last token
	 */
	public record TokenEvent(int index, int cachedTokens, int promptTokens, boolean last) {
	}

}
