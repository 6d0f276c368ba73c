package io.github.dualmap.stats;

import io.github.dualmap.core.EngineSnapshot;

/** Receives the outcome of every scrape. Called from the scraper's threads. */
public interface ScrapeListener {

	void onSnapshot(String pool, String instanceId, EngineSnapshot snapshot);

	void onFailure(String pool, String instanceId, Throwable failure);

}
