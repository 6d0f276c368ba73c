package io.github.dualmap.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.dualmap.core.SchedulerSettings;
import jakarta.validation.Valid;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import org.jspecify.annotations.Nullable;

/** {@code dualmap.slo.*}: time-to-first-token objectives. */
public class SloProperties {

	/** TTFT objective of a request that names none. */
	@NotNull(message = "dualmap.slo.ttft must be set")
	private Duration ttft = SchedulerSettings.DEFAULT_SLO;

	/** Request header naming a class from dualmap.slo.classes. */
	@NotBlank(message = "dualmap.slo.class-header must not be blank")
	@Pattern(regexp = "[A-Za-z0-9!#$%&'*+.^_`|~-]+", message = "dualmap.slo.class-header must be an HTTP header name")
	private String classHeader = "x-slo-class";

	/** TTFT objective per request class; an unknown class gets dualmap.slo.ttft. */
	@Valid
	private Map<String, SloClass> classes = new LinkedHashMap<>();

	@AssertTrue(message = "dualmap.slo.ttft must be > 0")
	private boolean isTtftPositive() {
		return this.ttft.toNanos() > 0;
	}

	public Duration getTtft() {
		return this.ttft;
	}

	public void setTtft(Duration ttft) {
		this.ttft = ttft;
	}

	public String getClassHeader() {
		return this.classHeader;
	}

	public void setClassHeader(String classHeader) {
		this.classHeader = classHeader;
	}

	public Map<String, SloClass> getClasses() {
		return this.classes;
	}

	public void setClasses(Map<String, SloClass> classes) {
		this.classes = classes;
	}

	/** One request class. */
	public static class SloClass {

		/** TTFT objective of requests of this class. */
		@NotNull(message = "dualmap.slo.classes.<name>.ttft must be set")
		private @Nullable Duration ttft;

		/**
		 * How long requests of this class may wait in the dispatch queues before they
		 * expire (dualmap.dispatch.expiry); unset: dualmap.dispatch.max-wait.
		 */
		private @Nullable Duration maxWait;

		/**
		 * Priority band of requests of this class, higher first: a band is served before
		 * any lower one, and under overload the lowest band is shed first; within a band
		 * the tenants share by weight. Unset: a request's band is its tenant's
		 * (dualmap.tenants.<name>.priority, 0 without tenants).
		 */
		private @Nullable Integer priority;

		@AssertTrue(message = "dualmap.slo.classes.<name>.ttft must be > 0")
		private boolean isTtftPositive() {
			return this.ttft == null || this.ttft.toNanos() > 0;
		}

		@AssertTrue(message = "dualmap.slo.classes.<name>.max-wait must be > 0")
		private boolean isMaxWaitPositive() {
			return this.maxWait == null || this.maxWait.toNanos() > 0;
		}

		public @Nullable Duration getMaxWait() {
			return this.maxWait;
		}

		public @Nullable Integer getPriority() {
			return this.priority;
		}

		public void setPriority(@Nullable Integer priority) {
			this.priority = priority;
		}

		public void setMaxWait(@Nullable Duration maxWait) {
			this.maxWait = maxWait;
		}

		public @Nullable Duration getTtft() {
			return this.ttft;
		}

		public void setTtft(@Nullable Duration ttft) {
			this.ttft = ttft;
		}

	}

}
