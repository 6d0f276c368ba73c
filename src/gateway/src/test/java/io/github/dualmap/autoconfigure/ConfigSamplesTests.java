package io.github.dualmap.autoconfigure;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.dualmap.core.DispatchMode;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.ModelListGatewayFilterFactory;
import io.github.dualmap.gateway.ModelRoutePredicateFactory;
import io.github.dualmap.gateway.OpenAiErrorWebExceptionHandler;
import io.github.dualmap.replica.ReplicaPublisher;
import io.github.dualmap.replica.ReplicaSync;
import io.github.dualmap.gateway.SloResolver;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.discovery.simple.reactive.SimpleReactiveDiscoveryClientAutoConfiguration;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.gateway.handler.predicate.PredicateDefinition;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClientSpecification;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.FileSystemResource;
import org.springframework.http.HttpHeaders;
import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every sample in {@code config-samples/} starts the DualMap auto-configuration and binds
 * to the values it promises.
 */
class ConfigSamplesTests {

	private static ApplicationContextRunner withSample(String file) {
		return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(DualMapAutoConfiguration.class,
				// The discovery client the samples' static instances come from.
				UtilAutoConfiguration.class, SimpleReactiveDiscoveryClientAutoConfiguration.class))
			.withInitializer(context -> {
				try {
					List<PropertySource<?>> sources = new YamlPropertySourceLoader().load(file,
							new FileSystemResource(Path.of("config-samples", file)));
					sources.forEach(s -> context.getEnvironment().getPropertySources().addFirst(s));
				}
				catch (IOException ex) {
					throw new IllegalStateException("cannot read config-samples/" + file, ex);
				}
			})
			// Scraping the sample addresses would only produce failures in the log.
			.withPropertyValues("dualmap.scrape.enabled=false");
	}

	@Test
	void vllmStaticPool() {
		withSample("vllm-static-pool.yml").run(context -> {
			assertThat(context).hasNotFailed();
			DualMapProperties p = context.getBean(DualMapProperties.class);
			assertThat(p.getServices()).containsExactly("vllm");
			assertThat(p.getPolicy()).isEqualTo("dualmap");
			assertThat(p.getMaxBodySize()).isEqualTo(DataSize.ofMegabytes(32));
			assertThat(p.getScrape().getInterval()).isEqualTo(Duration.ofMillis(500));
			assertThat(context.getBean(DualMapRegistry.class).services()).containsOnlyKeys("vllm");
			assertThat(context.getBeansOfType(LoadBalancerClientSpecification.class).values())
				.extracting(LoadBalancerClientSpecification::getName)
				.containsExactly("vllm");
		});
	}

	@Test
	void multiModel() {
		withSample("multi-model.yml").run(context -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(DualMapProperties.class).getServices()).containsExactly("llama", "qwen");
			assertThat(context.getBean(DualMapRegistry.class).services()).containsOnlyKeys("llama", "qwen");
			DualMapRegistry registry = context.getBean(DualMapRegistry.class);
			assertThat(registry.service("llama").instancePool().settings().defaultSloNanos())
				.isEqualTo(Duration.ofSeconds(5).toNanos());
			assertThat(registry.service("qwen").instancePool().settings().defaultSloNanos())
				.isEqualTo(Duration.ofSeconds(10).toNanos());
			assertThat(registry.service("qwen").queues().settings().maxPrefillTokens()).isEqualTo(32768);
			assertThat(registry.service("llama").queues().settings().maxPrefillTokens()).isEqualTo(16384);
			assertThat(context.getBean(DualMapProperties.class).getModelList().getOtherServices())
				.containsExactly("whisper");
			assertThat(context).hasSingleBean(ModelRoutePredicateFactory.class)
				.hasSingleBean(OpenAiErrorWebExceptionHandler.class);
			// The routes' Model predicates, as the gateway builds them.
			ModelRoutePredicateFactory factory = context.getBean(ModelRoutePredicateFactory.class);
			for (int route = 0; route < 3; route++) {
				String predicate = context.getEnvironment()
					.getRequiredProperty("spring.cloud.gateway.server.webflux.routes[" + route + "].predicates[1]");
				PredicateDefinition definition = new PredicateDefinition(predicate);
				assertThat(definition.getName()).isEqualTo("Model");
				ModelRoutePredicateFactory.Config config = new ModelRoutePredicateFactory.Config()
					.setModels(List.copyOf(definition.getArgs().values()));
				assertThat(factory.applyAsync(config)).hasToString("Model: " + config.getModels());
			}
			assertThat(context.getEnvironment()
				.getRequiredProperty("spring.cloud.gateway.server.webflux.routes[3].filters[0]"))
				.isEqualTo("ModelList");
			assertThat(context.getBean(ModelListGatewayFilterFactory.class)
				.apply(new ModelListGatewayFilterFactory.Config())).isNotNull();
		});
	}

	@Test
	void policyAb() {
		withSample("policy-ab.yml").run(context -> {
			assertThat(context).hasNotFailed();
			DualMapRegistry registry = context.getBean(DualMapRegistry.class);
			assertThat(registry.services()).containsOnlyKeys("llm-a", "llm-b");
			assertThat(registry.service("llm-a").policyName()).isEqualTo("dualmap");
			assertThat(registry.service("llm-a").queues().settings().mode()).isEqualTo(DispatchMode.QUEUE);
			assertThat(registry.service("llm-b").policyName()).isEqualTo("sglang-cache-aware");
			assertThat(registry.service("llm-b").queues().settings().mode()).isEqualTo(DispatchMode.PASS_THROUGH);
			// Both routes split one Weight group evenly.
			for (int route = 0; route < 2; route++) {
				PredicateDefinition weight = new PredicateDefinition(context.getEnvironment()
					.getRequiredProperty("spring.cloud.gateway.server.webflux.routes[" + route + "].predicates[1]"));
				assertThat(weight.getName()).isEqualTo("Weight");
				assertThat(weight.getArgs().values()).containsExactly("llm", "50");
			}
		});
	}

	@Test
	void sglangPool() {
		withSample("sglang-pool.yml").run(context -> {
			assertThat(context).hasNotFailed();
			DualMapProperties p = context.getBean(DualMapProperties.class);
			assertThat(p.getServices()).containsExactly("sglang");
			assertThat(p.getShadow().getCapacityTokens()).isEqualTo(600_000);
			assertThat(p.getScrape().getInterval()).isEqualTo(Duration.ofMillis(250));
			assertThat(p.getScrape().pathFor("sglang")).isEqualTo("/metrics");
			assertThat(p.getScrape().pathFor("other")).isEqualTo("/metrics");
			assertThat(p.getScrape().getPathMetadataKey()).isEqualTo("dualmap.metrics-path");
		});
	}

	@Test
	void sloClasses() {
		withSample("slo-classes.yml").run(context -> {
			assertThat(context).hasNotFailed();
			DualMapProperties p = context.getBean(DualMapProperties.class);
			assertThat(p.getSlo().getClasses()).containsOnlyKeys("interactive", "standard", "batch");
			assertThat(p.getSlo().getClasses().get("interactive").getTtft()).isEqualTo(Duration.ofMillis(800));
			assertThat(p.getHotspot().getMaxQueueWait()).isEqualTo(Duration.ofSeconds(2));
			assertThat(p.toSchedulerSettings().switchHitCharge()).isEqualTo(1.0);
			QueueSettings queues = p.toQueueSettings();
			SloResolver slos = context.getBean(SloResolver.class);
			HttpHeaders headers = new HttpHeaders();
			headers.add("x-slo-class", "batch");
			assertThat(slos.resolveNanos(headers)).isEqualTo(Duration.ofSeconds(60).toNanos());
			// Batch requests must not expire before their SLO is spent: their class's own
			// bound, not half their SLO.
			SloResolver.Slo batch = slos.resolve(headers);
			assertThat(queues.waitBoundNanos(batch.maxWaitNanos(), batch.nanos()))
				.isEqualTo(Duration.ofSeconds(90).toNanos());
			headers.set("x-slo-class", "interactive");
			SloResolver.Slo interactive = slos.resolve(headers);
			assertThat(interactive.maxWaitNanos()).isZero();
			assertThat(queues.waitBoundNanos(interactive.maxWaitNanos(), interactive.nanos()))
				.isEqualTo(Duration.ofMillis(400).toNanos());
			headers.add("x-slo-ttft-ms", "250");
			assertThat(slos.resolveNanos(headers)).isEqualTo(Duration.ofMillis(250).toNanos());
		});
	}

	@Test
	void queueTuning() {
		withSample("queue-tuning.yml").run(context -> {
			assertThat(context).hasNotFailed();
			QueueSettings q = context.getBean(DualMapRegistry.class).queueSettings();
			assertThat(q.mode()).isEqualTo(DispatchMode.QUEUE);
			assertThat(q.maxPrefillTokens()).isEqualTo(4096);
			assertThat(q.maxPrefillRequests()).isEqualTo(4);
			assertThat(q.agingNanos()).isEqualTo(Duration.ofMillis(800).toNanos());
			assertThat(q.maxQueuedPerInstance()).isEqualTo(64);
			assertThat(q.maxQueuedPerPool()).isEqualTo(256);
			assertThat(q.maxWaitNanos()).isEqualTo(Duration.ofSeconds(10).toNanos());
			assertThat(q.expiry()).isEqualTo(QueueSettings.Expiry.REJECT);
			assertThat(context.getBean(DualMapRegistry.class).settings().slowStartNanos())
				.isEqualTo(Duration.ofSeconds(30).toNanos());
		});
	}

	@Test
	void peakCapacity() {
		withSample("peak-capacity.yml").run(context -> {
			assertThat(context).hasNotFailed();
			DualMapRegistry registry = context.getBean(DualMapRegistry.class);
			assertThat(context.getBean(DualMapProperties.class).getPolicy()).isEqualTo("dualmap-cache-affinity");
			assertThat(registry.service("vllm").policyName()).isEqualTo("dualmap-cache-affinity");
			QueueSettings q = registry.service("vllm").queues().settings();
			assertThat(q.maxWaitShare()).isEqualTo(0.35);
			assertThat(q.rescue()).isTrue();
			assertThat(q.rescueToQueue()).isTrue();
			// The policy has no hotspot step: its queue moves nothing.
			assertThat(q.maxMigrations()).isZero();
			assertThat(q.waitBoundNanos(0, Duration.ofSeconds(5).toNanos()))
				.isEqualTo(Duration.ofMillis(1_750).toNanos());
		});
	}

	/**
	 * No sample puts the actuator on the port clients reach: each gives it a port of its
	 * own (and, outside Kubernetes, an internal address), so the dualmap endpoint's drain
	 * operation, where a sample opens it, is not reachable by clients.
	 */
	@Test
	void everySampleKeepsTheActuatorOffTheClientPort() throws IOException {
		List<String> samples;
		try (var files = java.nio.file.Files.list(Path.of("config-samples"))) {
			samples = files.map(f -> f.getFileName().toString())
				.filter(f -> f.endsWith(".yml") && !f.startsWith("prometheus-rules"))
				.sorted()
				.toList();
		}
		assertThat(samples).hasSizeGreaterThan(8);
		for (String file : samples) {
			List<PropertySource<?>> sources = new YamlPropertySourceLoader().load(file,
					new FileSystemResource(Path.of("config-samples", file)));
			org.springframework.core.env.StandardEnvironment environment = new org.springframework.core.env.StandardEnvironment();
			sources.forEach(s -> environment.getPropertySources().addFirst(s));
			String managementPort = environment.getProperty("management.server.port");
			assertThat(managementPort).as("management.server.port of %s", file).isNotBlank();
			assertThat(managementPort).as(file).isNotEqualTo(environment.getProperty("server.port", "8080"));
			boolean kubernetes = file.equals("kubernetes-discovery.yml") || file.equals("replicas.yml");
			if (!kubernetes) {
				assertThat(environment.getProperty("management.server.address")).as(file).isEqualTo("127.0.0.1");
			}
			for (String peer : environment.getProperty("dualmap.replicas.peers", String[].class, new String[0])) {
				assertThat(peer).as(file).startsWith("https://");
			}
		}
	}

	@Test
	void replicas() {
		withSample("replicas.yml").run(context -> assertThat(context).hasFailed()
			.getFailure()
			.rootCause()
			.hasMessageContaining("dualmap.replicas.token is an unresolved ${...} placeholder"));
		// The sample's SSL bundle reads certificate files of the deployment: none here.
		withSample("replicas.yml").withPropertyValues("DUALMAP_REPLICA_TOKEN=from-a-secret-0123456789")
			.withInitializer(context -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("no-bundle", Map.of("dualmap.replicas.ssl-bundle", ""))))
			.run(context -> {
				assertThat(context).hasNotFailed().hasSingleBean(ReplicaSync.class);
				ReplicasProperties r = context.getBean(DualMapProperties.class).getReplicas();
				// Peers over https, trusted through the bundle the sample defines.
				assertThat(r.getPeers()).allMatch(u -> u.getScheme().equals("https"));
				assertThat(context.getEnvironment()
					.getProperty("spring.ssl.bundle.pem.replica-peers.truststore.certificate")).isNotBlank();
				assertThat(r.getToken()).isEqualTo("from-a-secret-0123456789");
				assertThat(r.getFlushInterval()).isEqualTo(Duration.ofMillis(50));
				assertThat(r.isBootstrap()).isTrue();
				assertThat(context.getEnvironment().getProperty("management.endpoint.health.group.readiness.include"))
					.contains("dualMapReplicas");
				assertThat(context.getBean(ReplicaPublisher.class).peers()).hasSize(3)
					.allMatch(u -> u.getHost().startsWith("gateway-"));
			});

	}

}
