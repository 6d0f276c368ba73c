package io.github.dualmap.tenant;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

/**
 * Per-tenant usage as Micrometer meters following the OpenTelemetry GenAI semantic
 * conventions ({@code gen_ai.client.token.usage},
 * {@code gen_ai.server.time_to_first_token}, {@code gen_ai.server.request.duration} with
 * {@code gen_ai.request.model} and {@code gen_ai.operation.name}), plus the budget
 * outcomes. Tag values stay bounded: tenants through {@link TenantDirectory#reported},
 * models to the first {@value #MAX_MODELS} seen in successful answers, each of at most
 * {@value #MAX_MODEL_LENGTH} characters (the rest {@value #OTHER_MODEL}).
 */
public final class GenAiMeters {

	/** Most distinct {@code gen_ai.request.model} values; further ones are "other". */
	public static final int MAX_MODELS = 100;

	/**
	 * Longest {@code gen_ai.request.model} value, in characters; a longer name is
	 * "other". A Hugging Face model id ({@code org/name}) is at most 96 characters for
	 * the name and fewer for the organisation; without a bound, a hundred 8 KB names took
	 * every scrape to 8 MB.
	 */
	public static final int MAX_MODEL_LENGTH = 256;

	static final String OTHER_MODEL = "other";

	static final String UNKNOWN_MODEL = "unknown";

	private final MeterRegistry registry;

	private final Set<String> models = ConcurrentHashMap.newKeySet();

	public GenAiMeters(MeterRegistry registry) {
		this.registry = registry;
	}

	/**
	 * The tag value of {@code model}: itself among the first {@value #MAX_MODELS} of at
	 * most {@value #MAX_MODEL_LENGTH} characters, else "other".
	 */
	String model(@Nullable String model) {
		if (model == null || model.isEmpty()) {
			return UNKNOWN_MODEL;
		}
		if (model.length() > MAX_MODEL_LENGTH) {
			return OTHER_MODEL;
		}
		if (this.models.contains(model)) {
			return model;
		}
		if (this.models.size() < MAX_MODELS && this.models.add(model)) {
			return model;
		}
		return this.models.contains(model) ? model : OTHER_MODEL;
	}

	private Tags tags(String tenant, @Nullable String model, String operation) {
		return Tags.of("gen_ai.operation.name", operation, "gen_ai.request.model", model(model), "tenant", tenant);
	}

	/** The tokens one successful request used. */
	public void tokens(String tenant, @Nullable String model, String operation, long input, long output) {
		Tags tags = tags(tenant, model, operation);
		summary(tags.and("gen_ai.token.type", "input")).record(input);
		summary(tags.and("gen_ai.token.type", "output")).record(output);
	}

	private DistributionSummary summary(Tags tags) {
		return DistributionSummary.builder("gen_ai.client.token.usage")
			.description("Tokens used per request (gen_ai.token.type input: prompt, output: completion), "
					+ "as the engine reported them or, failing that, as the gateway estimated them")
			.baseUnit("tokens")
			.tags(tags)
			.register(this.registry);
	}

	/** Time from the request's arrival to its first output token (streams). */
	public void timeToFirstToken(String tenant, @Nullable String model, String operation, Duration ttft) {
		Timer.builder("gen_ai.server.time_to_first_token")
			.description("Time from the request's arrival at the gateway to the first output token of its stream")
			.tags(tags(tenant, model, operation))
			.register(this.registry)
			.record(ttft);
	}

	/** Time from the request's arrival to the end of its answer. */
	public void requestDuration(String tenant, @Nullable String model, String operation, Duration duration) {
		Timer.builder("gen_ai.server.request.duration")
			.description("Time from the request's arrival at the gateway to the end of its successful answer")
			.tags(tags(tenant, model, operation))
			.register(this.registry)
			.record(duration);
	}

	/** One admission decision. */
	public void admission(String tenant, Admission.Outcome outcome) {
		Counter.builder("dualmap.tenants.requests")
			.description("Requests per tenant by budget outcome: admitted, refused (429), over-in-shadow "
					+ "(over budget, served in shadow mode), unchecked (budget store failed, failing open), "
					+ "unavailable (budget store failed, failing closed: 503)")
			.tags("tenant", tenant, "outcome", outcome.tag())
			.register(this.registry)
			.increment();
	}

	/** Tokens (weighted cost) charged to a tenant once a request ended. */
	public void charged(String tenant, long cost) {
		Counter.builder("dualmap.tenants.tokens.charged")
			.description("Weighted token cost charged to the tenant's budgets for requests that ended")
			.tags("tenant", tenant)
			.register(this.registry)
			.increment(cost);
	}

	/** A budget store call that failed or timed out. */
	public void storeFailure(String operation, String failureMode) {
		Counter.builder("dualmap.tenants.store.failures")
			.description("Budget store calls that failed or timed out (operation admit, settle, charge unchecked "
					+ "usage, revoke, or keep an unchecked charge), and the failure mode applied to admissions "
					+ "(open: served unchecked, closed: 503)")
			.tags("operation", operation, "failure-mode", failureMode)
			.register(this.registry)
			.increment();
	}

}
