package io.github.dualmap.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

import org.springframework.cloud.gateway.handler.predicate.AbstractRoutePredicateFactory;
import org.springframework.cloud.gateway.handler.predicate.GatewayPredicate;
import org.springframework.util.PatternMatchUtils;
import org.springframework.web.server.ServerWebExchange;

/**
 * The {@code Model} route predicate: matches a request whose JSON body names one of the
 * given models ({@code model}), exactly or by {@code *} wildcards, so one gateway can
 * send each model to its own pool:
 *
 * <pre>
 * predicates: [Path=/v1/**, Model=meta-llama/Llama-3.1-8B-Instruct]
 * predicates: [Path=/v1/**, "Model=Qwen/*,my-lora-*"]
 * </pre>
 *
 * Predicates run before any filter, so once a route uses this predicate the
 * {@link RequestModelWebFilter} reads the body of JSON requests before routing (under
 * {@code dualmap.max-body-size}) and replays it to whichever route matches; the DualMap
 * filters then reuse it. A request whose body names no model (a GET, a non-JSON or
 * multipart upload, an invalid body) matches no {@code Model} route.
 */
public class ModelRoutePredicateFactory extends AbstractRoutePredicateFactory<ModelRoutePredicateFactory.Config> {

	private volatile boolean inUse;

	public ModelRoutePredicateFactory() {
		super(Config.class);
	}

	@Override
	public List<String> shortcutFieldOrder() {
		return List.of("models");
	}

	@Override
	public ShortcutType shortcutType() {
		return ShortcutType.GATHER_LIST;
	}

	@Override
	public Predicate<ServerWebExchange> apply(Config config) {
		List<String> models = List.copyOf(config.getModels());
		if (models.isEmpty() || models.stream().anyMatch(m -> m == null || m.isBlank())) {
			throw new IllegalArgumentException(
					"Model predicate needs one or more non-blank model names, got " + models);
		}
		String[] patterns = models.toArray(String[]::new);
		this.inUse = true;
		return new GatewayPredicate() {
			@Override
			public boolean test(ServerWebExchange exchange) {
				String model = exchange.getAttribute(DualMapExchangeAttributes.REQUEST_MODEL_ATTR);
				return model != null && PatternMatchUtils.simpleMatch(patterns, model);
			}

			@Override
			public Object getConfig() {
				return config;
			}

			@Override
			public String toString() {
				return "Model: " + models;
			}
		};
	}

	/** Whether a route was built with this predicate: only then are bodies read early. */
	boolean inUse() {
		return this.inUse;
	}

	/** The models a route serves. */
	public static class Config {

		private List<String> models = new ArrayList<>();

		public List<String> getModels() {
			return this.models;
		}

		public Config setModels(List<String> models) {
			this.models = models;
			return this;
		}

	}

}
