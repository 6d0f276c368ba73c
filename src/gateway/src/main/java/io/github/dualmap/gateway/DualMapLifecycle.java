package io.github.dualmap.gateway;

import org.springframework.boot.web.server.context.WebServerGracefulShutdownLifecycle;

/**
 * The lifecycle phase of DualMap's background work (discovery refresh, scraping, the
 * dispatch tick, replica publication).
 * <p>
 * Below the web server's own phases, so this work starts before the server accepts its
 * first request and stops only after the server has stopped: during a graceful shutdown
 * (Spring Boot's default) the requests still queued in the gateway keep their wait bound,
 * non-streaming requests keep their estimated end of prefill, and decisions keep fresh
 * engine metrics and membership until the last request has left. At the default phase
 * this work would stop first and leave draining requests to events alone.
 */
public final class DualMapLifecycle {

	/**
	 * Two steps of 1024 below
	 * {@link WebServerGracefulShutdownLifecycle#SMART_LIFECYCLE_PHASE}: below the
	 * server's start/stop phase, which is one step below the graceful shutdown.
	 */
	public static final int PHASE = WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE - 2048;

	private DualMapLifecycle() {
	}

}
