package io.github.dualmap.autoconfigure;

import java.time.Duration;

import io.github.dualmap.core.DispatchMode;
import jakarta.validation.Valid;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.Min;
import org.jspecify.annotations.Nullable;

/**
 * Overrides for one service's pool ({@code dualmap.pools.<service>.*}); an unset value is
 * the global one.
 */
public class PoolProperties {

	/** Routing policy of this service (default: dualmap.policy). */
	private @Nullable String policy;

	@Valid
	private final Slo slo = new Slo();

	@Valid
	private final Dispatch dispatch = new Dispatch();

	public @Nullable String getPolicy() {
		return this.policy;
	}

	public void setPolicy(@Nullable String policy) {
		this.policy = policy;
	}

	public Slo getSlo() {
		return this.slo;
	}

	public Dispatch getDispatch() {
		return this.dispatch;
	}

	/** {@code dualmap.pools.<service>.slo.*}. */
	public static class Slo {

		/**
		 * TTFT objective of a request to this service that names none (default:
		 * dualmap.slo.ttft).
		 */
		private @Nullable Duration ttft;

		@AssertTrue(message = "dualmap.pools.<service>.slo.ttft must be > 0")
		private boolean isTtftPositive() {
			return this.ttft == null || this.ttft.toNanos() > 0;
		}

		public @Nullable Duration getTtft() {
			return this.ttft;
		}

		public void setTtft(@Nullable Duration ttft) {
			this.ttft = ttft;
		}

	}

	/** {@code dualmap.pools.<service>.dispatch.*}. */
	public static class Dispatch {

		/** Dispatch mode of this service (default: dualmap.dispatch.mode). */
		private @Nullable DispatchMode mode;

		/**
		 * Prefill requests per instance of this service (default:
		 * dualmap.dispatch.max-prefill-requests).
		 */
		@Min(value = 1, message = "dualmap.pools.<service>.dispatch.max-prefill-requests must be >= 1")
		private @Nullable Integer maxPrefillRequests;

		/**
		 * Uncached prefill tokens per instance of this service (default:
		 * dualmap.dispatch.max-prefill-tokens).
		 */
		@Min(value = 1, message = "dualmap.pools.<service>.dispatch.max-prefill-tokens must be >= 1")
		private @Nullable Long maxPrefillTokens;

		/**
		 * Whether placement counts the prompts queued for this service's instances as
		 * cached there, for a pool of chats whose turns come faster than its queue drains
		 * (default: dualmap.dispatch.count-queued-prefixes).
		 */
		private @Nullable Boolean countQueuedPrefixes;

		public @Nullable DispatchMode getMode() {
			return this.mode;
		}

		public void setMode(@Nullable DispatchMode mode) {
			this.mode = mode;
		}

		public @Nullable Integer getMaxPrefillRequests() {
			return this.maxPrefillRequests;
		}

		public void setMaxPrefillRequests(@Nullable Integer maxPrefillRequests) {
			this.maxPrefillRequests = maxPrefillRequests;
		}

		public @Nullable Long getMaxPrefillTokens() {
			return this.maxPrefillTokens;
		}

		public void setMaxPrefillTokens(@Nullable Long maxPrefillTokens) {
			this.maxPrefillTokens = maxPrefillTokens;
		}

		public @Nullable Boolean getCountQueuedPrefixes() {
			return this.countQueuedPrefixes;
		}

		public void setCountQueuedPrefixes(@Nullable Boolean countQueuedPrefixes) {
			this.countQueuedPrefixes = countQueuedPrefixes;
		}

	}

}
