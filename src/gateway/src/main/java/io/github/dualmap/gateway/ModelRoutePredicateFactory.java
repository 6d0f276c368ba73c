package io.github.dualmap.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import io.github.dualmap.prompt.InvalidRequestException;
import io.github.dualmap.prompt.PromptParser;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.handler.AsyncPredicate;
import org.springframework.cloud.gateway.handler.predicate.AbstractRoutePredicateFactory;
import org.springframework.cloud.gateway.handler.predicate.GatewayPredicate;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.ResolvableType;
import org.springframework.core.codec.DecodingException;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.codec.multipart.FormPartEvent;
import org.springframework.http.codec.multipart.PartEvent;
import org.springframework.http.codec.multipart.PartEventHttpMessageReader;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.util.PatternMatchUtils;
import org.springframework.web.server.ResponseStatusException;
import org.springframework.web.server.ServerWebExchange;

/**
 * The {@code Model} route predicate: matches a request whose body names one of the given
 * models ({@code model}: the top-level field of a JSON body, the form field of a
 * {@code multipart/form-data} upload such as an audio transcription), exactly or by
 * {@code *} wildcards, so one gateway can send each model to its own pool:
 *
 * <pre>
 * predicates: [Path=/v1/**, Model=meta-llama/Llama-3.1-8B-Instruct]
 * predicates: [Path=/v1/**, "Model=Qwen/*,my-lora-*"]
 * </pre>
 *
 * The body is read when the gateway first evaluates this predicate for a request, that is
 * only for JSON or multipart {@code POST} requests that passed the route's earlier
 * predicates (list {@code Model} after {@code Path}): under
 * {@code dualmap.max-body-size}, into {@link DualMapExchange#requestBody()} with its
 * model in {@link DualMapExchange#requestModel()}, and replayed to whichever route
 * matches (the gateway's {@code AdaptCachedBodyGlobalFilter} installs the replaying
 * request, as for Spring's {@code ReadBody} predicate); the DualMap filters reuse the
 * bytes. A body over the limit gets 413 whatever route it then takes
 * ({@link BodyTooLargeFilter}), or when none does
 * ({@link OpenAiErrorWebExceptionHandler}): the gateway goes on evaluating routes after a
 * predicate fails; so does a compressed body that decodes past it. A request whose body
 * names no model (a GET, another content type, an invalid body) matches no {@code Model}
 * route; when no route takes it, a body of another content type gets a 415
 * {@code unsupported_media_type} (it is not read: {@code text/plain} or a form holding
 * JSON is no JSON body, as OpenAI and vLLM answer too), a body that could not be read its
 * 400 ({@link DualMapExchange#bodyUnreadable()}), any other 404 {@code model_not_found}.
 */
public class ModelRoutePredicateFactory extends AbstractRoutePredicateFactory<ModelRoutePredicateFactory.Config> {

	private final PromptParser parser;

	private static final String MODEL_FIELD = "model";

	/** The bodies it reads, as its 415 names them. */
	private static final String UNSUPPORTED_EXPECTED = "application/json, or multipart/form-data for an upload";

	private static final ResolvableType PART_EVENT = ResolvableType.forClass(PartEvent.class);

	private final BodyLimits limits;

	private final PartEventHttpMessageReader parts = new PartEventHttpMessageReader();

	public ModelRoutePredicateFactory(PromptParser parser, int maxBodyBytes) {
		this(parser, BodyLimits.of(maxBodyBytes));
	}

	/**
	 * @param limits how it reads bodies: size, the buffers they are reserved in, read
	 * timeout
	 */
	public ModelRoutePredicateFactory(PromptParser parser, BodyLimits limits) {
		super(Config.class);
		this.parser = parser;
		this.limits = limits;
	}

	@Override
	public List<String> shortcutFieldOrder() {
		return List.of("models");
	}

	@Override
	public ShortcutType shortcutType() {
		return ShortcutType.GATHER_LIST;
	}

	/** The test on a body already read; {@link #applyAsync} reads it first. */
	@Override
	public Predicate<ServerWebExchange> apply(Config config) {
		String[] patterns = patterns(config);
		return new GatewayPredicate() {
			@Override
			public boolean test(ServerWebExchange exchange) {
				return matches(patterns, exchange);
			}

			@Override
			public Object getConfig() {
				return config;
			}

			@Override
			public String toString() {
				return "Model: " + config.getModels();
			}
		};
	}

	/** The same test, reading the body first when it was not read yet. */
	@Override
	public AsyncPredicate<ServerWebExchange> applyAsync(Config config) {
		Predicate<ServerWebExchange> test = apply(config);
		return new AsyncPredicate<>() {
			@Override
			public Publisher<Boolean> apply(ServerWebExchange exchange) {
				DualMapExchange state = DualMapExchange.of(exchange);
				if (state.requestBody() != null) {
					return Mono.just(test.test(exchange));
				}
				ServerHttpRequest request = exchange.getRequest();
				if (!HttpMethod.POST.equals(request.getMethod()) || state.bodyRefused() != null) {
					return Mono.just(false);
				}
				HttpHeaders headers = request.getHeaders();
				if (!ContentTypes.json(headers) && !ContentTypes.multipart(headers)) {
					// Not read, whatever it holds: when no route takes it, this is why.
					if (state.bodyUnreadable() == null) {
						state.bodyUnreadable(ContentTypes.unsupported(headers, UNSUPPORTED_EXPECTED));
					}
					return Mono.just(false);
				}
				return read(exchange).map(read -> test.test(exchange));
			}

			@Override
			public Object getConfig() {
				return config;
			}

			@Override
			public String toString() {
				return test.toString();
			}
		};
	}

	/**
	 * Reads the body into the exchange's attributes and leaves a request replaying it for
	 * the route. Over the limit: marks the exchange (the gateway goes on trying routes,
	 * and {@link BodyTooLargeFilter} answers 413 on whichever matches) and fails with
	 * {@link BodyTooLargeException} (answered 413 when none matches).
	 */
	private Mono<byte[]> read(ServerWebExchange exchange) {
		return RequestBodies.read(exchange, this.limits)
			.onErrorResume(DataBufferLimitException.class,
					ex -> refused(exchange, new BodyTooLargeException(this.limits.maxBytes())))
			.onErrorResume(ResponseStatusException.class, ex -> refused(exchange, ex))
			.flatMap(body -> {
				ServerHttpRequest replaying = RequestBodies.replaying(exchange, body);
				DualMapExchange.of(exchange).requestBody(body);
				exchange.getAttributes()
					.put(ServerWebExchangeUtils.CACHED_SERVER_HTTP_REQUEST_DECORATOR_ATTR, replaying);
				Mono<String> model = ContentTypes.multipart(exchange.getRequest().getHeaders()) ? formModel(replaying)
						: BodyEncodings.offloaded(exchange.getRequest().getHeaders(), body,
								() -> modelOf(exchange, body));
				return model.doOnNext(m -> DualMapExchange.of(exchange).requestModel(m)).thenReturn(body);
			});
	}

	/**
	 * The {@code model} field of a {@code multipart/form-data} upload (the audio
	 * transcription and translation APIs), read from the bytes already in memory; empty
	 * when there is none or the form cannot be read.
	 */
	private Mono<String> formModel(ServerHttpRequest replaying) {
		return this.parts.read(PART_EVENT, replaying, Map.of())
			.doOnNext(event -> DataBufferUtils.release(event.content()))
			.filter(event -> event instanceof FormPartEvent form && MODEL_FIELD.equals(form.name()))
			.next()
			.map(event -> ((FormPartEvent) event).value())
			.filter(model -> !model.isEmpty())
			// Not a form, or a field over the reader's 256 KB: no model of ours.
			.onErrorResume(ex -> ex instanceof DecodingException || ex instanceof DataBufferLimitException,
					ex -> Mono.empty());
	}

	private static Mono<byte[]> refused(ServerWebExchange exchange, ResponseStatusException why) {
		DualMapExchange.of(exchange).bodyRefused(why);
		return Mono.error(why);
	}

	private @Nullable String modelOf(ServerWebExchange exchange, byte[] body) {
		try {
			byte[] json = BodyEncodings.decoded(exchange.getRequest().getHeaders(), body, this.limits.maxBytes(),
					this.limits.reserving(exchange));
			if (json != null && json != body) {
				// Decoded once: PromptRoutingFilter parses these bytes (and lets them
				// go).
				DualMapExchange.of(exchange).decodedBody(json);
			}
			if (json == null) {
				// A coding the gateway does not decode: routed by load, no model.
				return null;
			}
			String model = this.parser.modelOf(json);
			if (model == null) {
				// Names none, or cannot: a route without a Model predicate may still take
				// it, and its own filters answer; when none does, this is the answer.
				this.parser.requireJsonObject(json);
			}
			return model;
		}
		catch (InvalidRequestException ex) {
			DualMapExchange.of(exchange).bodyUnreadable(ex);
			return null;
		}
		catch (DataBufferLimitException ex) {
			// Decoded past dualmap.max-body-size: 413 as a body sent that large.
			BodyTooLargeException tooLarge = new BodyTooLargeException(this.limits.maxBytes());
			DualMapExchange.of(exchange).bodyRefused(tooLarge);
			throw tooLarge;
		}
		catch (RequestBuffers.FullException ex) {
			// Its decoded form does not fit: answered 503 as a body that did not.
			DualMapExchange.of(exchange).bodyRefused(ex);
			throw ex;
		}
	}

	private static boolean matches(String[] patterns, ServerWebExchange exchange) {
		DualMapExchange state = DualMapExchange.find(exchange);
		String model = state == null ? null : state.requestModel();
		return model != null && PatternMatchUtils.simpleMatch(patterns, model);
	}

	private static String[] patterns(Config config) {
		List<String> models = List.copyOf(config.getModels());
		if (models.isEmpty() || models.stream().anyMatch(m -> m == null || m.isBlank())) {
			throw new IllegalArgumentException(
					"Model predicate needs one or more non-blank model names, got " + models);
		}
		return models.toArray(String[]::new);
	}

	/**
	 * A body over {@code dualmap.max-body-size} met while choosing a route: a 413 for any
	 * error handler, the OpenAI error from {@link OpenAiErrorWebExceptionHandler}.
	 */
	public static class BodyTooLargeException extends ResponseStatusException {

		private final int maxBodyBytes;

		BodyTooLargeException(int maxBodyBytes) {
			super(HttpStatus.CONTENT_TOO_LARGE,
					"request body exceeds dualmap.max-body-size (" + maxBodyBytes + " bytes)");
			this.maxBodyBytes = maxBodyBytes;
		}

		int maxBodyBytes() {
			return this.maxBodyBytes;
		}

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
