package io.github.dualmap.actuate;

import io.github.dualmap.gateway.DualMapRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.context.annotation.Bean;
import org.springframework.http.MediaType;
import org.springframework.security.config.annotation.web.reactive.EnableWebFluxSecurity;
import org.springframework.security.config.web.server.ServerHttpSecurity;
import org.springframework.security.core.userdetails.MapReactiveUserDetailsService;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.web.server.SecurityWebFilterChain;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With the actuator on a port of its own (management.server.port), the drain operation
 * there still needs dualmap.security.role. Runs in the spring-security surefire execution
 * only.
 */
@EnabledIfSystemProperty(named = "dualmap.test.spring-security", matches = "true")
@SpringBootTest(classes = ManagementPortAccessWithSpringSecurityTests.App.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "dualmap.services=llm", "dualmap.scrape.enabled=false",
				"spring.cloud.discovery.client.simple.instances.llm[0].uri=http://127.0.0.1:9",
				"spring.cloud.discovery.client.simple.instances.llm[0].instance-id=a", "management.server.port=0",
				"management.server.address=127.0.0.1", "management.endpoints.web.exposure.include=dualmap",
				"management.endpoint.dualmap.access=unrestricted" })
class ManagementPortAccessWithSpringSecurityTests {

	@LocalManagementPort
	int managementPort;

	@Autowired
	DualMapRegistry registry;

	WebTestClient.ResponseSpec drain(String user) {
		WebTestClient.RequestBodySpec post = WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + this.managementPort)
			.build()
			.post()
			.uri("/actuator/dualmap/llm/a")
			.contentType(MediaType.APPLICATION_JSON);
		if (user != null) {
			post = post.headers(h -> h.setBasicAuth(user, "secret"));
		}
		return post.bodyValue("{\"draining\":true}").exchange();
	}

	@Test
	void drainingOnTheManagementPortNeedsTheRole() {
		drain(null).expectStatus().isUnauthorized();
		drain("viewer").expectStatus().isForbidden();
		assertThat(this.registry.service("llm").isDraining("a")).isFalse();
		drain("operator").expectStatus().isOk();
		assertThat(this.registry.service("llm").isDraining("a")).isTrue();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	@EnableWebFluxSecurity
	static class App {

		@Bean
		SecurityWebFilterChain permitAll(ServerHttpSecurity http) {
			return http.authorizeExchange(e -> e.anyExchange().permitAll()).httpBasic(b -> {
			}).csrf(ServerHttpSecurity.CsrfSpec::disable).build();
		}

		@Bean
		MapReactiveUserDetailsService users() {
			return new MapReactiveUserDetailsService(
					User.withUsername("operator").password("{noop}secret").roles("DUALMAP_OPERATOR").build(),
					User.withUsername("viewer").password("{noop}secret").roles("VIEWER").build());
		}

	}

}
