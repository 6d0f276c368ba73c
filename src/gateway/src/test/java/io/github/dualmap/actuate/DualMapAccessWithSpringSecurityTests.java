package io.github.dualmap.actuate;

import io.github.dualmap.gateway.DualMapRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.context.ApplicationContext;
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
 * With Spring Security, and an application chain that permits every request (as a gateway
 * whose clients carry API keys to the engines may have): the drain operation needs an
 * authenticated caller with dualmap.security.role (401 without one, 403 without the
 * role), the replica-sync path one with dualmap.security.replica-role besides its token,
 * while reads of the endpoint and client requests are left to the application. Runs in
 * the spring-security surefire execution only, whose classpath has Spring Security.
 */
@EnabledIfSystemProperty(named = "dualmap.test.spring-security", matches = "true")
@SpringBootTest(classes = DualMapAccessWithSpringSecurityTests.App.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.cloud.gateway.server.webflux.routes[0].id=llm",
				"spring.cloud.gateway.server.webflux.routes[0].uri=lb://llm",
				"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/v1/**", "dualmap.services=llm",
				"dualmap.scrape.enabled=false",
				"spring.cloud.discovery.client.simple.instances.llm[0].uri=http://127.0.0.1:9",
				"spring.cloud.discovery.client.simple.instances.llm[0].instance-id=a",
				"management.endpoints.web.exposure.include=dualmap", "management.endpoint.dualmap.access=unrestricted",
				"dualmap.replicas.enabled=true", "dualmap.replicas.token=peer-secret-0123456789",
				"dualmap.replicas.bootstrap=false", "dualmap.security.replica-role=DUALMAP_PEER" })
@AutoConfigureWebTestClient
class DualMapAccessWithSpringSecurityTests {

	@Autowired
	WebTestClient client;

	@Autowired
	DualMapRegistry registry;

	@Autowired
	ApplicationContext context;

	WebTestClient.ResponseSpec drain(String user) {
		WebTestClient.RequestBodySpec post = this.client.post()
			.uri("/actuator/dualmap/llm/a")
			.contentType(MediaType.APPLICATION_JSON);
		if (user != null) {
			post = post.headers(h -> h.setBasicAuth(user, "secret"));
		}
		return post.bodyValue("{\"draining\":true}").exchange();
	}

	@Test
	void drainingNeedsTheRole() {
		drain(null).expectStatus().isUnauthorized().expectBody().jsonPath("$.error.code").isEqualTo("unauthenticated");
		drain("viewer").expectStatus()
			.isForbidden()
			.expectBody()
			.jsonPath("$.error.code")
			.isEqualTo("permission_denied")
			.jsonPath("$.error.message")
			.value(m -> assertThat((String) m).contains("DUALMAP_OPERATOR"));
		assertThat(this.registry.service("llm").isDraining("a")).isFalse();
		drain("operator").expectStatus().isOk();
		assertThat(this.registry.service("llm").isDraining("a")).isTrue();
		this.registry.undrain("a");
		// Reading is the application's business (its chain permits it here).
		this.client.get().uri("/actuator/dualmap").exchange().expectStatus().isOk();
		// No start-up warnings: Spring Security guards the endpoint and the replica path.
		assertThat(this.context.getBean(DualMapExposureWarnings.class).warnings()).isEmpty();
	}

	@Test
	void replicaSyncNeedsTheReplicaRoleBesidesItsToken() {
		this.client.post()
			.uri("/dualmap/replicas/releases")
			.headers(h -> h.setBearerAuth("peer-secret-0123456789"))
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{}")
			.exchange()
			.expectStatus()
			.isUnauthorized();
		this.client.post()
			.uri("/dualmap/replicas/releases")
			.headers(h -> h.setBasicAuth("operator", "secret"))
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{}")
			.exchange()
			.expectStatus()
			.isForbidden();
		// With the role, the handler has its say: the token is still checked.
		this.client.post()
			.uri("/dualmap/replicas/releases")
			.headers(h -> h.setBasicAuth("peer", "secret"))
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{}")
			.exchange()
			.expectStatus()
			.isUnauthorized()
			.expectBody()
			.jsonPath("$.error.code")
			.isEqualTo("invalid_replica_token");
	}

	@Test
	void clientRequestsAreLeftToTheApplication() {
		this.client.post()
			.uri("/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"model\":\"m\",\"messages\":\"not a list\"}")
			.exchange()
			.expectStatus()
			.isBadRequest();
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
					User.withUsername("viewer").password("{noop}secret").roles("VIEWER").build(),
					User.withUsername("peer").password("{noop}secret").roles("DUALMAP_PEER").build());
		}

	}

}
