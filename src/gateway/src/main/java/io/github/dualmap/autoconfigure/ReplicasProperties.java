package io.github.dualmap.autoconfigure;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.dualmap.replica.ReplicaSyncHandler;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import org.jspecify.annotations.Nullable;

import org.springframework.util.unit.DataSize;

/**
 * {@code dualmap.replicas.*}, replica sync: gateway replicas tell each other which prompt
 * blocks they sent to which instance, so every replica's shadow index knows which of a
 * prompt's two candidates holds it, whichever replica routed it before.
 */
public class ReplicasProperties {

	/** Whether this replica publishes its releases and accepts its peers'. */
	private boolean enabled = false;

	/**
	 * Shared secret: sent as a bearer token and required on the receiving endpoint.
	 * Required when enabled (the endpoint writes routing state).
	 */
	private @Nullable String token;

	/**
	 * Base URLs of the other replicas, e.g. https://gateway-1:8443. Across a network,
	 * https: the token is sent with every publication.
	 */
	private List<URI> peers = new ArrayList<>();

	/**
	 * Name of a Spring Boot SSL bundle (spring.ssl.bundle.*) whose trust store verifies
	 * the certificates of https:// peers, and whose key store, if it has one, is this
	 * replica's client certificate. Unset: the JVM's default trust store.
	 */
	private @Nullable String sslBundle;

	/**
	 * Discovery service id of the gateway itself: its instances are peers too (this
	 * replica recognises and skips itself).
	 */
	private @Nullable String serviceId;

	/** How often the peer list is read from discovery (with service-id). */
	@NotNull(message = "dualmap.replicas.peer-refresh-interval must be set")
	private Duration peerRefreshInterval = Duration.ofSeconds(10);

	/** Path of the receiving endpoint on every replica's server port. */
	@NotBlank(message = "dualmap.replicas.path must not be blank")
	@Pattern(regexp = "/[A-Za-z0-9._~/-]*",
			message = "dualmap.replicas.path must be a path starting with / of letters, digits and ._~/-")
	private String path = "/dualmap/replicas/releases";

	/** Time between two publications to the peers. */
	@NotNull(message = "dualmap.replicas.flush-interval must be set")
	private Duration flushInterval = Duration.ofMillis(50);

	/** Timeout of one publication to one peer. */
	@NotNull(message = "dualmap.replicas.timeout must be set")
	private Duration timeout = Duration.ofSeconds(1);

	/** Most releases in one publication (the rest wait for the next). */
	@Min(value = 1, message = "dualmap.replicas.max-batch-releases must be >= 1")
	private int maxBatchReleases = 2048;

	/**
	 * Most releases waiting to be published, between two flushes and in each peer's
	 * pending list while its publication is open; beyond it releases are dropped (and
	 * counted): peers learn less, nothing else is lost.
	 */
	@Min(value = 1, message = "dualmap.replicas.max-buffered-releases must be >= 1")
	private int maxBufferedReleases = 16384;

	/**
	 * Largest publication body accepted from a peer (a larger one gets 413); also the
	 * size of the snapshot a starting peer is given and accepts.
	 */
	@NotNull(message = "dualmap.replicas.max-body-size must be set")
	private DataSize maxBodySize = DataSize.ofMegabytes(16);

	/**
	 * Whether a starting replica asks its peers for what they know (their shadow indexes)
	 * before it learns from their new releases.
	 */
	private boolean bootstrap = true;

	/**
	 * Whether replicas share their load too: each publishes, with every flush, its
	 * requests and tokens in prefill and its queued tokens per instance, and counts its
	 * peers' in the dispatch queues' release limit and in its load estimates.
	 */
	private boolean shareLoad = true;

	/**
	 * How long a peer's published load counts after its last publication (a peer that
	 * stopped or cannot reach this replica stops counting then). Longer than
	 * flush-interval; unset: 4 x flush-interval, at least 1s.
	 */
	private @Nullable Duration loadTtl;

	@AssertTrue(message = "dualmap.replicas.load-ttl must be longer than dualmap.replicas.flush-interval")
	private boolean isLoadTtlBeyondFlush() {
		return this.loadTtl == null || this.loadTtl.compareTo(this.flushInterval) > 0;
	}

	/**
	 * The load TTL in effect: {@code load-ttl}, else 4 x flush-interval, at least 1 s.
	 */
	public Duration effectiveLoadTtl() {
		if (this.loadTtl != null) {
			return this.loadTtl;
		}
		Duration derived = this.flushInterval.multipliedBy(4);
		return derived.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : derived;
	}

	public boolean isShareLoad() {
		return this.shareLoad;
	}

	public void setShareLoad(boolean shareLoad) {
		this.shareLoad = shareLoad;
	}

	public @Nullable Duration getLoadTtl() {
		return this.loadTtl;
	}

	public void setLoadTtl(@Nullable Duration loadTtl) {
		this.loadTtl = loadTtl;
	}

	@AssertTrue(message = "dualmap.replicas.token must be set when dualmap.replicas.enabled=true")
	private boolean isTokenSetWhenEnabled() {
		return !this.enabled || (this.token != null && !this.token.isBlank());
	}

	// \$ and \{ \}: literal text to Hibernate Validator, not an EL expression.
	@AssertTrue(message = "dualmap.replicas.token is an unresolved \\$\\{...\\} placeholder; "
			+ "set the variable it names")
	private boolean isTokenResolved() {
		return this.token == null || !this.token.contains("${");
	}

	@AssertTrue(message = "dualmap.replicas.token must be at least " + ReplicaSyncHandler.MIN_TOKEN_LENGTH
			+ " visible ASCII characters (no spaces): it is the shared secret of every replica, sent in a header")
	private boolean isTokenStrong() {
		// Unset, blank or unresolved: the checks above name that.
		return this.token == null || this.token.isBlank() || this.token.contains("${")
				|| ReplicaSyncHandler.validToken(this.token);
	}

	@AssertTrue(message = "dualmap.replicas.flush-interval, timeout and peer-refresh-interval must be >= 1ms")
	private boolean isDurationsPositive() {
		return this.flushInterval.toMillis() >= 1 && this.timeout.toMillis() >= 1
				&& this.peerRefreshInterval.toMillis() >= 1;
	}

	@AssertTrue(message = "dualmap.replicas.peers must be absolute http or https URLs")
	private boolean isPeersHttp() {
		return this.peers.stream()
			.allMatch(u -> u != null && u.getHost() != null
					&& ("http".equalsIgnoreCase(u.getScheme()) || "https".equalsIgnoreCase(u.getScheme())));
	}

	@AssertTrue(message = "dualmap.replicas.max-body-size must be > 0")
	private boolean isMaxBodySizePositive() {
		return this.maxBodySize.toBytes() > 0;
	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public @Nullable String getToken() {
		return this.token;
	}

	public void setToken(@Nullable String token) {
		this.token = token;
	}

	public List<URI> getPeers() {
		return this.peers;
	}

	public void setPeers(List<URI> peers) {
		this.peers = peers;
	}

	public @Nullable String getServiceId() {
		return this.serviceId;
	}

	public void setServiceId(@Nullable String serviceId) {
		this.serviceId = serviceId;
	}

	public Duration getPeerRefreshInterval() {
		return this.peerRefreshInterval;
	}

	public void setPeerRefreshInterval(Duration peerRefreshInterval) {
		this.peerRefreshInterval = peerRefreshInterval;
	}

	public String getPath() {
		return this.path;
	}

	public void setPath(String path) {
		this.path = path;
	}

	public Duration getFlushInterval() {
		return this.flushInterval;
	}

	public void setFlushInterval(Duration flushInterval) {
		this.flushInterval = flushInterval;
	}

	public Duration getTimeout() {
		return this.timeout;
	}

	public void setTimeout(Duration timeout) {
		this.timeout = timeout;
	}

	public int getMaxBatchReleases() {
		return this.maxBatchReleases;
	}

	public void setMaxBatchReleases(int maxBatchReleases) {
		this.maxBatchReleases = maxBatchReleases;
	}

	public int getMaxBufferedReleases() {
		return this.maxBufferedReleases;
	}

	public void setMaxBufferedReleases(int maxBufferedReleases) {
		this.maxBufferedReleases = maxBufferedReleases;
	}

	public @Nullable String getSslBundle() {
		return this.sslBundle;
	}

	public void setSslBundle(@Nullable String sslBundle) {
		this.sslBundle = sslBundle;
	}

	public boolean isBootstrap() {
		return this.bootstrap;
	}

	public void setBootstrap(boolean bootstrap) {
		this.bootstrap = bootstrap;
	}

	public DataSize getMaxBodySize() {
		return this.maxBodySize;
	}

	public void setMaxBodySize(DataSize maxBodySize) {
		this.maxBodySize = maxBodySize;
	}

}
