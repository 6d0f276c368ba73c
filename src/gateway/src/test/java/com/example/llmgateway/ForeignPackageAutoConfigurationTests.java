package com.example.llmgateway;

import io.github.dualmap.core.DispatchMode;
import io.github.dualmap.gateway.DispatchAccountingFilter;
import io.github.dualmap.gateway.DualMapLoadBalancer;
import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.PromptRoutingFilter;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.core.ReactorLoadBalancer;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.ResolvableType;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The auto-configuration loads in an application outside {@code io.github.dualmap} and
 * routes a request through the DualMap load balancer.
 */
class ForeignPackageAutoConfigurationTests {

	@Test
	void dualMapArrivesThroughAutoConfigurationAndRoutes() {
		DisposableServer engine = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.route(r -> r.post("/v1/completions", (req, res) -> req.receive()
				.then(res.header("content-type", "application/json").sendString(Mono.just("{\"id\":\"x\"}")).then())))
			.bindNow();
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(ExampleGatewayApplication.class)
			.web(WebApplicationType.REACTIVE)
			// Pass-through dispatch: requests go out as soon as they are chosen.
			.properties("server.port=0", "server.address=127.0.0.1", "dualmap.services=llm",
					"dualmap.dispatch.mode=pass-through", "dualmap.scrape.enabled=false",
					"spring.cloud.loadbalancer.cache.enabled=false",
					"spring.cloud.discovery.client.simple.instances.llm[0].uri=http://127.0.0.1:" + engine.port(),
					"spring.cloud.gateway.server.webflux.routes[0].id=llm",
					"spring.cloud.gateway.server.webflux.routes[0].uri=lb://llm",
					"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/v1/**")
			.run()) {
			assertThat(context.getBeansOfType(DualMapRegistry.class)).hasSize(1);
			assertThat(context.getBean(DualMapRegistry.class).queueSettings().mode())
				.isEqualTo(DispatchMode.PASS_THROUGH);
			assertThat(context.getBeansOfType(PromptRoutingFilter.class)).hasSize(1);
			assertThat(context.getBeansOfType(DispatchAccountingFilter.class)).hasSize(1);
			Object balancer = context.getBean(LoadBalancerClientFactory.class)
				.getInstance("llm",
						ResolvableType.forClassWithGenerics(ReactorLoadBalancer.class, ServiceInstance.class)
							.resolve());
			assertThat(balancer).isInstanceOf(DualMapLoadBalancer.class);
			// Other service ids keep Spring's default load balancer.
			assertThat(context.getBean(LoadBalancerClientFactory.class).getInstance("other"))
				.isNotInstanceOf(DualMapLoadBalancer.class);
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			WebTestClient.bindToServer()
				.baseUrl("http://127.0.0.1:" + port)
				.responseTimeout(java.time.Duration.ofSeconds(30))
				.build()
				.post()
				.uri("/v1/completions")
				.header("content-type", "application/json")
				.bodyValue("{\"model\":\"m\",\"prompt\":\"hello\"}")
				.exchange()
				.expectStatus()
				.isOk()
				// Off by default: they would name the backend to every client.
				.expectHeader()
				.doesNotExist("x-dualmap-instance")
				.expectHeader()
				.doesNotExist("x-dualmap-reason");
			assertThat(context.getBean(DualMapRegistry.class)
				.service("llm")
				.instancePool()
				.instance("127.0.0.1:" + engine.port())).satisfies(s -> assertThat(s.dispatched()).isEqualTo(1));
		}
		finally {
			engine.disposeNow();
		}
	}

}
