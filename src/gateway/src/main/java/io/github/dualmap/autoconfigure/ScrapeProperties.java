package io.github.dualmap.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.stats.ScrapeSettings;
import jakarta.validation.Valid;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.DecimalMax;
import jakarta.validation.constraints.DecimalMin;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import org.jspecify.annotations.Nullable;

import org.springframework.util.unit.DataSize;

/** {@code dualmap.scrape.*}: scraping each instance's Prometheus endpoint. */
public class ScrapeProperties {

	/** The least default of {@code unresponsive-after}. */
	static final Duration DEFAULT_UNRESPONSIVE_AFTER = Duration.ofSeconds(10);

	/** Whether engine metrics are scraped at all. */
	private boolean enabled = true;

	/** Time between two scrapes of one instance. */
	@NotNull(message = "dualmap.scrape.interval must be set")
	private Duration interval = ScrapeSettings.DEFAULT_INTERVAL;

	/** Timeout of one scrape. */
	@NotNull(message = "dualmap.scrape.timeout must be set")
	private Duration timeout = ScrapeSettings.DEFAULT_TIMEOUT;

	/** Random fraction of the interval each instance's schedule is shifted by. */
	@DecimalMin(value = "0", message = "dualmap.scrape.jitter must be in [0, 1)")
	@DecimalMax(value = "1", inclusive = false, message = "dualmap.scrape.jitter must be in [0, 1)")
	private double jitter = ScrapeSettings.DEFAULT_JITTER;

	/** Path of the metrics endpoint on each instance. */
	@NotBlank(message = "dualmap.scrape.path must not be blank")
	private String path = "/metrics";

	/** Scraped state older than this counts as unknown. */
	@NotNull(message = "dualmap.scrape.stale-after must be set")
	private Duration staleAfter = SchedulerSettings.DEFAULT_STALE_AFTER;

	/**
	 * Estimate the prefill each engine has admitted and not yet computed from its
	 * prefix-cache counters, and count it as work ahead there where it is more than this
	 * gateway's own.
	 */
	private boolean engineBacklog = SchedulerSettings.DEFAULT_ENGINE_BACKLOG;

	/** Instance metadata key overriding the metrics path of one instance. */
	@NotBlank(message = "dualmap.scrape.path-metadata-key must not be blank")
	private String pathMetadataKey = "dualmap.metrics-path";

	/** Largest metrics body read; a larger one is a failed scrape. */
	@NotNull(message = "dualmap.scrape.max-body-size must be set")
	private DataSize maxBodySize = DataSize.ofBytes(ScrapeSettings.DEFAULT_MAX_BODY_BYTES);

	/** Per-service overrides, by service id. */
	@Valid
	private Map<String, Service> services = new LinkedHashMap<>();

	/**
	 * An instance from which nothing has come for this long (no scrape answered, even
	 * with an error status, and no response byte) gets no new requests, and its queued
	 * ones move, until it answers again: an engine that accepts connections but hangs
	 * would otherwise keep its share of requests, each one waiting for the client or the
	 * response timeout. 0 turns it off; set, it must exceed interval + timeout. Default:
	 * 10 s, or 4 x (interval + timeout) when that is longer.
	 */
	private @Nullable Duration unresponsiveAfter;

	@AssertTrue(message = "dualmap.scrape.interval, timeout and stale-after must be > 0")
	private boolean isDurationsPositive() {
		return this.interval.toNanos() > 0 && this.timeout.toNanos() > 0 && this.staleAfter.toNanos() > 0;
	}

	/** Else each scraped state goes stale before the next scrape replaces it. */
	@AssertTrue(message = "dualmap.scrape.stale-after (default 2s) must be longer than dualmap.scrape.interval")
	private boolean isStaleAfterLongerThanInterval() {
		return this.staleAfter.compareTo(this.interval) > 0;
	}

	@AssertTrue(message = "dualmap.scrape.max-body-size must be > 0")
	private boolean isMaxBodySizePositive() {
		return this.maxBodySize.toBytes() > 0;
	}

	@AssertTrue(message = "dualmap.scrape.unresponsive-after must be 0 (off) or longer than interval + timeout")
	private boolean isUnresponsiveAfterValid() {
		return this.unresponsiveAfter == null || this.unresponsiveAfter.isZero()
				|| this.unresponsiveAfter.compareTo(this.interval.plus(this.timeout)) > 0;
	}

	public @Nullable Duration getUnresponsiveAfter() {
		return this.unresponsiveAfter;
	}

	public void setUnresponsiveAfter(@Nullable Duration unresponsiveAfter) {
		this.unresponsiveAfter = unresponsiveAfter;
	}

	/** The silence bound in force: as set, else 10 s or 4 x (interval + timeout). */
	public Duration unresponsiveAfter() {
		if (this.unresponsiveAfter != null) {
			return this.unresponsiveAfter;
		}
		Duration scaled = this.interval.plus(this.timeout).multipliedBy(4);
		return scaled.compareTo(DEFAULT_UNRESPONSIVE_AFTER) > 0 ? scaled : DEFAULT_UNRESPONSIVE_AFTER;
	}

	public DataSize getMaxBodySize() {
		return this.maxBodySize;
	}

	public void setMaxBodySize(DataSize maxBodySize) {
		this.maxBodySize = maxBodySize;
	}

	/** The metrics path of {@code serviceId}: its override, else the default path. */
	public String pathFor(String serviceId) {
		Service s = this.services.get(serviceId);
		return s != null && s.path != null ? s.path : this.path;
	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public Duration getInterval() {
		return this.interval;
	}

	public void setInterval(Duration interval) {
		this.interval = interval;
	}

	public Duration getTimeout() {
		return this.timeout;
	}

	public void setTimeout(Duration timeout) {
		this.timeout = timeout;
	}

	public double getJitter() {
		return this.jitter;
	}

	public void setJitter(double jitter) {
		this.jitter = jitter;
	}

	public String getPath() {
		return this.path;
	}

	public void setPath(String path) {
		this.path = path;
	}

	public boolean isEngineBacklog() {
		return this.engineBacklog;
	}

	public void setEngineBacklog(boolean engineBacklog) {
		this.engineBacklog = engineBacklog;
	}

	public Duration getStaleAfter() {
		return this.staleAfter;
	}

	public void setStaleAfter(Duration staleAfter) {
		this.staleAfter = staleAfter;
	}

	public String getPathMetadataKey() {
		return this.pathMetadataKey;
	}

	public void setPathMetadataKey(String pathMetadataKey) {
		this.pathMetadataKey = pathMetadataKey;
	}

	public Map<String, Service> getServices() {
		return this.services;
	}

	public void setServices(Map<String, Service> services) {
		this.services = services;
	}

	/** Scrape settings of one service. */
	public static class Service {

		/** Metrics path of this service's instances, e.g. /actuator/prometheus. */
		private @Nullable String path;

		public @Nullable String getPath() {
			return this.path;
		}

		public void setPath(@Nullable String path) {
			this.path = path;
		}

	}

}
