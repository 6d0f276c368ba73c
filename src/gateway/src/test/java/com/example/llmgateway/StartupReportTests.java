package com.example.llmgateway;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A gateway says at start-up which pools DualMap took over, and warns when a service name
 * in {@code dualmap.services} and one in an {@code lb://} route do not meet: a mismatch
 * is otherwise silent (the route gets plain round robin).
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupReportTests {

	private static List<String> lines(CapturedOutput output, String level, String logger) {
		return output.getAll().lines().filter(l -> l.contains(" " + level + " ") && l.contains(logger)).toList();
	}

	@Test
	void eachPoolIsReportedAndEachMismatchWarned(CapturedOutput output) {
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(ExampleGatewayApplication.class)
			.web(WebApplicationType.REACTIVE)
			.properties("server.port=0", "server.address=127.0.0.1", "dualmap.services=llm,vllm",
					"dualmap.pools.vllm.dispatch.mode=pass-through", "dualmap.pools.vllm.policy=round-robin",
					"dualmap.scrape.enabled=false",
					"spring.cloud.discovery.client.simple.instances.llm[0].uri=http://127.0.0.1:9",
					"spring.cloud.discovery.client.simple.instances.llm[1].uri=http://127.0.0.2:9",
					"spring.cloud.discovery.client.simple.instances.llm[2].uri=http://127.0.0.3:9",
					"spring.cloud.gateway.server.webflux.routes[0].id=chat",
					"spring.cloud.gateway.server.webflux.routes[0].uri=lb://llm",
					"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/v1/**",
					"spring.cloud.gateway.server.webflux.routes[1].id=embeddings",
					"spring.cloud.gateway.server.webflux.routes[1].uri=lb://embedder",
					"spring.cloud.gateway.server.webflux.routes[1].predicates[0]=Path=/embed/**",
					"spring.cloud.gateway.server.webflux.routes[2].id=static",
					"spring.cloud.gateway.server.webflux.routes[2].uri=http://127.0.0.1:9",
					"spring.cloud.gateway.server.webflux.routes[2].predicates[0]=Path=/static/**")
			.run()) {
			List<String> info = lines(output, "INFO", "DualMapStartupReport");
			assertThat(info).hasSize(2);
			assertThat(info.get(0))
				.contains("DualMap routes pool 'llm': policy dualmap, dispatch mode queue," + " 3 instances found");
			assertThat(info.get(1))
				.contains("DualMap routes pool 'vllm': policy round-robin, dispatch mode pass-through,"
						+ " 0 instances found");
			List<String> warnings = lines(output, "WARN", "DualMapStartupReport");
			assertThat(warnings).hasSize(2);
			assertThat(warnings).anySatisfy(
					w -> assertThat(w).contains("dualmap.services lists 'vllm' but no route sends to lb://vllm"));
			assertThat(warnings).anySatisfy(w -> assertThat(w)
				.contains("Route 'embeddings' sends to lb://embedder, which is not in dualmap.services"));
		}
	}

	@Test
	void matchingNamesWarnNothing(CapturedOutput output) {
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(ExampleGatewayApplication.class)
			.web(WebApplicationType.REACTIVE)
			.properties("server.port=0", "server.address=127.0.0.1", "dualmap.services=llm",
					"dualmap.scrape.enabled=false",
					"spring.cloud.discovery.client.simple.instances.llm[0].uri=http://127.0.0.1:9",
					"spring.cloud.gateway.server.webflux.routes[0].id=chat",
					"spring.cloud.gateway.server.webflux.routes[0].uri=lb://llm",
					"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/v1/**")
			.run()) {
			assertThat(lines(output, "INFO", "DualMapStartupReport")).singleElement()
				.asString()
				.contains("DualMap routes pool 'llm': policy dualmap, dispatch mode queue, 1 instances found");
			assertThat(lines(output, "WARN", "DualMapStartupReport")).isEmpty();
		}
	}

	@Test
	void discoveryLocatorRoutesAreListedOnceNotWarnedOneByOne(CapturedOutput output) {
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(ExampleGatewayApplication.class)
			.web(WebApplicationType.REACTIVE)
			.properties("server.port=0", "server.address=127.0.0.1", "dualmap.services=llm",
					"dualmap.scrape.enabled=false",
					"spring.cloud.gateway.server.webflux.discovery.locator.enabled=true",
					"spring.cloud.discovery.client.simple.instances.llm[0].uri=http://127.0.0.1:9",
					"spring.cloud.discovery.client.simple.instances.billing[0].uri=http://127.0.0.2:9",
					"spring.cloud.discovery.client.simple.instances.accounts[0].uri=http://127.0.0.3:9",
					"spring.cloud.gateway.server.webflux.routes[0].id=embeddings",
					"spring.cloud.gateway.server.webflux.routes[0].uri=lb://embedder",
					"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/embed/**")
			.run()) {
			List<String> warnings = lines(output, "WARN", "DualMapStartupReport");
			// The explicit route still warns; the locator's routes (and its route to llm,
			// which counts as a route to the pool) do not.
			assertThat(warnings).singleElement()
				.asString()
				.contains("Route 'embeddings' sends to lb://embedder, which is not in dualmap.services");
			assertThat(lines(output, "INFO", "DualMapStartupReport"))
				.anySatisfy(i -> assertThat(i).contains("The discovery locator's routes to lb://accounts, lb://billing"
						+ " are balanced by Spring Cloud LoadBalancer, not DualMap"));
		}
	}

}
