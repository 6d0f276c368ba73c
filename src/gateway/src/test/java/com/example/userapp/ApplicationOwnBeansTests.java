package com.example.userapp;

import java.time.Duration;

import io.github.dualmap.gateway.DualMapLoadBalancer;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.LoadBalanced;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClients;
import org.springframework.cloud.loadbalancer.core.RandomLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ReactorLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application that adds the jar keeps what it configured for itself: its default load
 * balancer configuration for other services, its own {@code WebClient.Builder}.
 */
class ApplicationOwnBeansTests {

	@Test
	void aDefaultLoadBalancerConfigurationOfTheApplicationLeavesDualMapPoolsToDualMap() {
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(RandomByDefaultApplication.class)
			.web(WebApplicationType.REACTIVE)
			.properties("server.port=0", "server.address=127.0.0.1", "dualmap.services=llm",
					"dualmap.scrape.enabled=false")
			.run()) {
			LoadBalancerClientFactory balancers = context.getBean(LoadBalancerClientFactory.class);
			// Before, the pool's child context held two balancers, Spring Cloud found
			// none
			// unique and every request of the pool got 503 "no instance".
			assertThat(balancers.getInstance("llm")).isInstanceOf(DualMapLoadBalancer.class);
			assertThat(balancers.getInstance("other")).isInstanceOf(RandomLoadBalancer.class);
		}
	}

	@Test
	void theApplicationsOwnLoadBalancedWebClientBuilderIsLeftAsItWas() {
		byte[] big = new byte[5 * 1024 * 1024];
		DisposableServer engine = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.route(r -> r.get("/big", (req, res) -> res.sendByteArray(Mono.just(big)))
				.get("/v1/models", (req, res) -> res.header("content-type", "application/json")
					.sendString(Mono.just("{\"object\":\"list\",\"data\":[{\"id\":\"m\",\"object\":\"model\"}]}"))))
			.bindNow();
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(OwnWebClientApplication.class)
			.web(WebApplicationType.REACTIVE)
			.properties("server.port=0", "server.address=127.0.0.1", "dualmap.services=llm",
					"dualmap.scrape.enabled=false", "spring.cloud.loadbalancer.cache.enabled=false",
					"spring.cloud.discovery.client.simple.instances.llm[0].uri=http://127.0.0.1:" + engine.port(),
					"spring.cloud.discovery.client.simple.instances.files[0].uri=http://127.0.0.1:" + engine.port(),
					"spring.cloud.gateway.server.webflux.routes[0].id=models",
					"spring.cloud.gateway.server.webflux.routes[0].uri=no://op",
					"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/v1/models",
					"spring.cloud.gateway.server.webflux.routes[0].filters[0]=ModelList")
			.run()) {
			// Its 16 MB codec limit holds (DualMap's model list set 4 MB on it)...
			byte[] fetched = context.getBean(WebClient.Builder.class)
				.build()
				.get()
				.uri("http://files/big")
				.retrieve()
				.bodyToMono(byte[].class)
				.block(Duration.ofSeconds(30));
			assertThat(fetched).hasSize(big.length);
			// ... and the model list asks each instance at its address, not through the
			// application's load balancer (which took 127.0.0.1 for a service id).
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			WebTestClient.bindToServer()
				.baseUrl("http://127.0.0.1:" + port)
				.responseTimeout(Duration.ofSeconds(30))
				.build()
				.get()
				.uri("/v1/models")
				.exchange()
				.expectStatus()
				.isOk()
				.expectBody()
				.jsonPath("$.data[0].id")
				.isEqualTo("m");
		}
		finally {
			engine.disposeNow();
		}
	}

	/** Switches every load balancer to random, as Spring Cloud documents. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@LoadBalancerClients(defaultConfiguration = RandomConfiguration.class)
	static class RandomByDefaultApplication {

	}

	static class RandomConfiguration {

		@Bean
		ReactorLoadBalancer<ServiceInstance> randomLoadBalancer(Environment environment,
				LoadBalancerClientFactory factory) {
			String name = environment.getProperty(LoadBalancerClientFactory.PROPERTY_NAME);
			return new RandomLoadBalancer(factory.getLazyProvider(name, ServiceInstanceListSupplier.class), name);
		}

	}

	/** Has its own load-balanced client builder, with a larger limit. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class OwnWebClientApplication {

		@Bean
		@LoadBalanced
		WebClient.Builder loadBalancedBuilder() {
			return WebClient.builder().codecs(c -> c.defaultCodecs().maxInMemorySize(16 * 1024 * 1024));
		}

	}

}
