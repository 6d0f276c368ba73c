package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.dualmap.StubEngine;
import io.github.dualmap.replica.ReplicaPublisher;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerGracefulShutdownLifecycle;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A gateway closed while a request waits in its dispatch queue: Spring Boot's graceful
 * shutdown waits for that request, and DualMap's background work keeps running until the
 * web server has stopped, so the queued request still gets its answer at its wait bound
 * (a 503 with {@code Retry-After}, as without a shutdown) instead of waiting for an event
 * that may come much later.
 * <p>
 * Not a {@code @GatewayIntegrationTest}: the test closes its gateway itself.
 */
class GracefulShutdownIntegrationTests {

	private final StubEngine engine = new StubEngine("only");

	private ConfigurableApplicationContext context;

	@AfterEach
	void stop() {
		if (this.context != null) {
			this.context.close();
		}
		this.engine.stop();
	}

	private ConfigurableApplicationContext start(Map<String, Object> extra) {
		Map<String, Object> properties = new java.util.HashMap<>(Map.of("server.port", "0", "server.address",
				"127.0.0.1", "spring.cloud.gateway.server.webflux.routes[0].id", "llm",
				"spring.cloud.gateway.server.webflux.routes[0].uri", "lb://llm",
				"spring.cloud.gateway.server.webflux.routes[0].predicates[0]", "Path=/v1/**",
				"spring.cloud.discovery.client.simple.instances.llm[0].uri", this.engine.uri(), "dualmap.services",
				"llm", "dualmap.scrape.enabled", "false", "dualmap.dispatch.max-prefill-requests", "1",
				"dualmap.dispatch.max-wait", "1s"));
		properties.putAll(extra);
		return new SpringApplicationBuilder(App.class).properties(properties).run();
	}

	private Mono<Integer> post(int port, String question) {
		String body = """
				{"model":"m","stream":true,"messages":[{"role":"user","content":"%s"}]}""".formatted(question);
		return WebClient.create("http://127.0.0.1:" + port)
			.post()
			.uri("/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchangeToMono(r -> r.releaseBody().thenReturn(r.statusCode().value()))
			.cache();
	}

	@Test
	void aRequestQueuedWhenTheGatewayIsClosedStillExpiresAtItsWaitBound() throws Exception {
		this.context = start(Map.of("spring.lifecycle.timeout-per-shutdown-phase", "20s"));
		int port = Integer.parseInt(this.context.getEnvironment().getProperty("local.server.port"));
		ServicePool service = this.context.getBean(DualMapRegistry.class).service("llm");
		// The first request holds the only instance's one prefill slot for 6 s.
		this.engine.firstByteDelay.set(Duration.ofSeconds(6));
		Mono<Integer> holding = post(port, "first");
		holding.subscribe();
		await().atMost(Duration.ofSeconds(5))
			.until(() -> service.instancePool().size() == 1
					&& service.instancePool().instances().get(0).prefillRequests() == 1);
		Mono<Integer> queued = post(port, "second");
		queued.subscribe();
		await().atMost(Duration.ofSeconds(5)).until(() -> service.queues().queued() == 1);
		long closing = System.nanoTime();
		CompletableFuture<Void> close = CompletableFuture.runAsync(this.context::close);
		// Before the fix the dispatch tick stopped first: the queued request waited for
		// the
		// first byte of the other (6 s) and was then served, 12 s after the close.
		assertThat(queued.block(Duration.ofSeconds(15))).isEqualTo(503);
		assertThat(Duration.ofNanos(System.nanoTime() - closing)).isLessThan(Duration.ofSeconds(4));
		assertThat(holding.block(Duration.ofSeconds(15))).isEqualTo(200);
		close.get(20, TimeUnit.SECONDS);
	}

	@Test
	void backgroundWorkRunsInsideTheWebServersLifecycle() {
		this.context = start(Map.of("dualmap.replicas.enabled", "true", "dualmap.replicas.token", "t0123456789abcdef",
				"dualmap.replicas.peers[0]", "http://127.0.0.1:1", "dualmap.scrape.enabled", "true"));
		for (Class<? extends SmartLifecycle> type : java.util.List.of(DispatchTicker.class, EngineScraping.class,
				DiscoveryMembership.class, ReplicaPublisher.class)) {
			assertThat(this.context.getBeansOfType(type)).as(type.getSimpleName())
				.isNotEmpty()
				.allSatisfy((name, bean) -> {
					assertThat(bean.isRunning()).isTrue();
					// Starts before the server's start/stop lifecycle, stops after it.
					assertThat(bean.getPhase())
						.isLessThan(WebServerGracefulShutdownLifecycle.SMART_LIFECYCLE_PHASE - 1024);
				});
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	// Loops of its own: closing this context must not take other servers down.
	@Import(OwnReactorResources.class)
	static class App {

	}

}
