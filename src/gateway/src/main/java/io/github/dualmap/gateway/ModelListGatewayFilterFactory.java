package io.github.dualmap.gateway;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Set;
import java.util.Map;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.prompt.OpenAiError;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;
import org.springframework.cloud.gateway.filter.GatewayFilter;
import org.springframework.cloud.gateway.filter.factory.AbstractGatewayFilterFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.util.UriComponentsBuilder;

/**
 * The {@code ModelList} route filter: answers {@code GET /v1/models} with the models of
 * every DualMap pool (or of the pools named), so clients of a gateway that routes by
 * {@link ModelRoutePredicateFactory model} see every model it serves. Each pool is asked
 * through one instance that accepts work (a second one if the first fails), with the
 * caller's {@code Authorization} header; the lists are merged in pool order, a model id
 * listed twice kept once. A pool that does not answer within the timeout is left out (and
 * logged); when none answers, 502, unless an instance refused the caller (a 4xx such as
 * vLLM's 401 for a wrong API key): then that answer, as the instance sent it. A merged
 * list (of the pools that answered) is served again to the same credentials for
 * {@code cache-ttl}. {@code HEAD} is answered as {@code GET}, other methods with 405.
 *
 * <pre>
 * - id: models
 *   uri: no://op
 *   predicates: [Path=/v1/models]
 *   filters: [ModelList]            # or ModelList=llama,qwen
 * </pre>
 */
public class ModelListGatewayFilterFactory extends AbstractGatewayFilterFactory<ModelListGatewayFilterFactory.Config> {

	private static final Log LOG = LogFactory.getLog(ModelListGatewayFilterFactory.class);

	/** Largest model list read from one instance. */
	private static final int MAX_LIST_BYTES = 4 * 1024 * 1024;

	private final DualMapRegistry registry;

	private final WebClient client;

	private final JsonMapper json = JsonMapper.shared();

	private final @Nullable ReactiveDiscoveryClient discovery;

	private final Defaults defaults;

	public ModelListGatewayFilterFactory(DualMapRegistry registry, WebClient.Builder client) {
		this(registry, client, null, Defaults.BUILT_IN);
	}

	/**
	 * @param discovery where the instances of {@code other-services} (pools DualMap does
	 * not route) are found; {@code null}: there must be none
	 * @param defaults what a route does not set ({@code dualmap.model-list.*}): in route
	 * configuration only the services can be set
	 */
	public ModelListGatewayFilterFactory(DualMapRegistry registry, WebClient.Builder client,
			@Nullable ReactiveDiscoveryClient discovery, Defaults defaults) {
		super(Config.class);
		this.registry = registry;
		this.client = client.codecs(c -> c.defaultCodecs().maxInMemorySize(MAX_LIST_BYTES)).build();
		this.discovery = discovery;
		this.defaults = defaults;
	}

	@Override
	public List<String> shortcutFieldOrder() {
		return List.of("services");
	}

	@Override
	public ShortcutType shortcutType() {
		return ShortcutType.GATHER_LIST;
	}

	@Override
	public GatewayFilter apply(Config config) {
		Duration timeout = config.getTimeout() != null ? config.getTimeout() : this.defaults.timeout();
		Duration cacheTtl = config.getCacheTtl() != null ? config.getCacheTtl() : this.defaults.cacheTtl();
		String path = config.getPath() != null ? config.getPath() : this.defaults.path();
		List<String> others = config.getOtherServices() != null ? config.getOtherServices()
				: this.defaults.otherServices();
		if (timeout.isNegative() || timeout.isZero()) {
			throw new IllegalArgumentException("ModelList timeout must be > 0 but was " + timeout);
		}
		if (cacheTtl.isNegative()) {
			throw new IllegalArgumentException("ModelList cache-ttl must be >= 0 but was " + cacheTtl);
		}
		for (String service : others) {
			if (this.registry.service(service) != null || this.discovery == null || service.isBlank()) {
				throw new IllegalArgumentException(
						"ModelList other service '" + service + "' is " + (this.discovery == null
								? "not found without a discovery client" : "blank or in dualmap.services"));
			}
		}
		for (String service : config.getServices()) {
			if (this.registry.service(service) == null && !others.contains(service)) {
				throw new IllegalArgumentException("ModelList names '" + service
						+ "', which is not in dualmap.services " + this.registry.services().keySet()
						+ " nor in dualmap.model-list.other-services " + others);
			}
		}
		// The pools are fixed when the registry is built.
		List<String> services = new ArrayList<>(config.getServices());
		if (services.isEmpty()) {
			services.addAll(this.registry.services().keySet());
			services.addAll(others);
		}
		ListCache cache = new ListCache(cacheTtl);
		List<String> listed = List.copyOf(services);
		return (exchange, chain) -> {
			HttpMethod method = exchange.getRequest().getMethod();
			if (HttpMethod.GET.equals(method) || HttpMethod.HEAD.equals(method)) {
				return list(exchange, listed, path, timeout, cache);
			}
			// The list is all this route serves (its URI is usually no://op, which would
			// answer an empty 200): as an engine does, refuse other methods.
			exchange.getResponse().getHeaders().setAllow(Set.of(HttpMethod.GET, HttpMethod.HEAD));
			return OpenAiErrorResponses.write(exchange, HttpStatus.METHOD_NOT_ALLOWED,
					new OpenAiError(
							"method " + method.name() + " is not allowed on " + exchange.getRequest().getPath().value()
									+ "; the model list answers GET",
							"invalid_request_error", null, "method_not_allowed"));
		};
	}

	private Mono<Void> list(ServerWebExchange exchange, List<String> services, String path, Duration timeout,
			ListCache cache) {
		String authorization = exchange.getRequest().getHeaders().getFirst(HttpHeaders.AUTHORIZATION);
		byte[] cached = cache.get(authorization);
		if (cached != null) {
			return OpenAiErrorResponses.json(exchange.getResponse(), HttpStatus.OK, cached);
		}
		return Flux.fromIterable(services)
			.flatMapSequential(service -> modelsOf(service, path, authorization, timeout))
			.collectList()
			.flatMap(answers -> {
				List<JsonNode> lists = answers.stream().map(PoolAnswer::data).filter(d -> d != null).toList();
				if (!lists.isEmpty()) {
					byte[] merged = this.json.writeValueAsBytes(merge(lists));
					cache.put(authorization, merged);
					return OpenAiErrorResponses.json(exchange.getResponse(), HttpStatus.OK, merged);
				}
				PoolAnswer refused = answers.stream().filter(a -> a.data() == null).findFirst().orElse(null);
				if (refused != null) {
					// Refused for the caller's own reason (credentials): say so.
					return OpenAiErrorResponses.body(exchange.getResponse(), HttpStatusCode.valueOf(refused.status()),
							refused.contentType(), refused.body());
				}
				return OpenAiErrorResponses.write(exchange, HttpStatus.BAD_GATEWAY, new OpenAiError(
						"no pool answered its model list: " + services, "server_error", null, "upstream_unavailable"));
			});
	}

	/**
	 * One pool's answer: its {@code data} array, or an instance's refusal of the caller
	 * (a 4xx, kept as sent); nothing when no instance answered.
	 */
	private Mono<PoolAnswer> modelsOf(String service, String path, @Nullable String authorization, Duration timeout) {
		return instancesOf(service).take(2)
			.map(instance -> UriComponentsBuilder.fromUri(instance.getUri()).replacePath(path).build().toUri())
			.concatMap(uri -> fetch(uri, authorization, timeout).onErrorResume(ex -> {
				LOG.warn("Model list of pool '" + service + "' from " + uri + " failed: " + ex);
				return Mono.empty();
			}), 0)
			.next();
	}

	/**
	 * A DualMap pool's instances that accept work, or what discovery lists for another
	 * service.
	 */
	private Flux<ServiceInstance> instancesOf(String service) {
		ServicePool pool = this.registry.service(service);
		if (pool != null) {
			List<ServiceInstance> accepting = new ArrayList<>();
			for (InstanceState s : pool.instancePool().instances()) {
				ServiceInstance instance = s.acceptsNewWork() ? pool.serviceInstance(s.id()) : null;
				if (instance != null) {
					accepting.add(instance);
				}
			}
			return Flux.fromIterable(accepting);
		}
		return this.discovery == null ? Flux.empty() : this.discovery.getInstances(service).onErrorResume(ex -> {
			LOG.warn("Instances of '" + service + "' not found: " + ex);
			return Flux.empty();
		});
	}

	private Mono<PoolAnswer> fetch(URI uri, @Nullable String authorization, Duration timeout) {
		return this.client.get().uri(uri).accept(MediaType.APPLICATION_JSON).headers(h -> {
			if (authorization != null) {
				h.set(HttpHeaders.AUTHORIZATION, authorization);
			}
		}).exchangeToMono(response -> {
			HttpStatusCode status = response.statusCode();
			if (status.is4xxClientError()) {
				MediaType type = response.headers().contentType().orElse(null);
				return response.bodyToMono(byte[].class)
					.defaultIfEmpty(new byte[0])
					.map(body -> new PoolAnswer(null, status.value(), type, body));
			}
			if (!status.is2xxSuccessful()) {
				return response.releaseBody().then(Mono.error(new IllegalStateException("answered " + status.value())));
			}
			return response.bodyToMono(byte[].class).map(body -> {
				JsonNode data = this.json.readTree(body).path("data");
				if (!data.isArray()) {
					throw new IllegalStateException("answer has no 'data' array");
				}
				return new PoolAnswer(data, 200, null, new byte[0]);
			});
		}).timeout(timeout);
	}

	private ObjectNode merge(List<JsonNode> lists) {
		Map<String, JsonNode> byId = new LinkedHashMap<>();
		List<JsonNode> withoutId = new ArrayList<>();
		for (JsonNode data : lists) {
			for (JsonNode model : data) {
				JsonNode id = model.path("id");
				if (id.isString()) {
					byId.putIfAbsent(id.stringValue(), model);
				}
				else {
					withoutId.add(model);
				}
			}
		}
		ObjectNode answer = this.json.createObjectNode().put("object", "list");
		ArrayNode data = answer.putArray("data");
		byId.values().forEach(data::add);
		withoutId.forEach(data::add);
		return answer;
	}

	/** A pool's list ({@code data}), or an instance's refusal: status, type, body. */
	private record PoolAnswer(@Nullable JsonNode data, int status, @Nullable MediaType contentType, byte[] body) {

	}

	/**
	 * Merged lists by caller credentials (a SHA-256 of the {@code Authorization} header,
	 * not the header), for a time to live, the least recently used out past
	 * {@value #MAX_ENTRIES}.
	 */
	private static final class ListCache {

		static final int MAX_ENTRIES = 1024;

		private final @Nullable Cache<String, byte[]> lists;

		ListCache(Duration ttl) {
			this.lists = ttl.isZero() ? null
					: Caffeine.newBuilder().maximumSize(MAX_ENTRIES).expireAfterWrite(ttl).build();
		}

		byte @Nullable [] get(@Nullable String authorization) {
			return this.lists == null ? null : this.lists.getIfPresent(key(authorization));
		}

		void put(@Nullable String authorization, byte[] list) {
			if (this.lists != null) {
				this.lists.put(key(authorization), list);
			}
		}

		private static String key(@Nullable String authorization) {
			if (authorization == null) {
				return "";
			}
			try {
				return HexFormat.of()
					.formatHex(MessageDigest.getInstance("SHA-256")
						.digest(authorization.getBytes(StandardCharsets.UTF_8)));
			}
			catch (NoSuchAlgorithmException ex) {
				throw new IllegalStateException("SHA-256 is required of every JVM", ex);
			}
		}

	}

	/**
	 * What a route does not set: {@code dualmap.model-list.*}.
	 *
	 * @param path the path of the model list on an instance
	 * @param timeout how long to wait for one instance's list
	 * @param cacheTtl how long a merged list is served again to the same credentials (0:
	 * ask the instances every time)
	 * @param otherServices services DualMap does not route (a plain {@code lb://} pool,
	 * such as a speech model's) whose models are listed too, found through the discovery
	 * client
	 */
	public record Defaults(String path, Duration timeout, Duration cacheTtl, List<String> otherServices) {

		/** {@code /v1/models}, 2 s, 5 s, none. */
		public static final Defaults BUILT_IN = new Defaults("/v1/models", Duration.ofSeconds(2), Duration.ofSeconds(5),
				List.of());

		public Defaults {
			otherServices = List.copyOf(otherServices);
		}

	}

	/**
	 * Which services to list, and, for routes built in code, the rest of {@link Defaults}
	 * ({@code null}: the default). In route configuration only {@code services} can be
	 * given (the shortcut {@code ModelList=llama,qwen}): Spring Cloud Gateway gathers
	 * every argument of this filter into that list.
	 */
	public static class Config {

		private List<String> services = new ArrayList<>();

		private @Nullable String path;

		private @Nullable Duration timeout;

		private @Nullable Duration cacheTtl;

		private @Nullable List<String> otherServices;

		/**
		 * Services to list: DualMap pools or other services; empty: every pool, then the
		 * other services.
		 */
		public List<String> getServices() {
			return this.services;
		}

		public Config setServices(List<String> services) {
			this.services = services;
			return this;
		}

		public @Nullable String getPath() {
			return this.path;
		}

		public Config setPath(@Nullable String path) {
			this.path = path;
			return this;
		}

		public @Nullable Duration getTimeout() {
			return this.timeout;
		}

		public Config setTimeout(@Nullable Duration timeout) {
			this.timeout = timeout;
			return this;
		}

		public @Nullable Duration getCacheTtl() {
			return this.cacheTtl;
		}

		public Config setCacheTtl(@Nullable Duration cacheTtl) {
			this.cacheTtl = cacheTtl;
			return this;
		}

		public @Nullable List<String> getOtherServices() {
			return this.otherServices;
		}

		public Config setOtherServices(@Nullable List<String> otherServices) {
			this.otherServices = otherServices;
			return this;
		}

	}

}
