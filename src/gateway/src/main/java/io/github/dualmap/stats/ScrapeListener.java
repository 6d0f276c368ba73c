package io.github.dualmap.stats;

import io.github.dualmap.core.EngineSnapshot;

/**
 * Receives the outcome of every scrape; called from the scraper's threads, so
 * implementations must be thread-safe and quick.
 */
public interface ScrapeListener {

	void onSnapshot(String pool, String instanceId, EngineSnapshot snapshot);

	/**
	 * Non-200, timeout, connection failure, oversized or unparseable body. A
	 * {@link ScrapeAnsweredException} or a body that did not parse (a
	 * {@link RuntimeException}) came from a server that answered; other
	 * {@link java.io.IOException}s mean no answer came.
	 */
	void onFailure(String pool, String instanceId, Throwable failure);

}
