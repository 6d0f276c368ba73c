package com.example.llmgateway;

import java.util.ArrayList;
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
 * A gateway without Spring Security warns at start-up when the {@code dualmap} endpoint
 * (its reads, or its drain operation) or the replica-sync path is reachable on the
 * client-facing port, when the {@code x-dualmap-*} headers are on, and when a replica
 * peer gets the token over plain http; it warns about nothing with the defaults, nor
 * about the endpoint once the actuator has a port of its own.
 */
@ExtendWith(OutputCaptureExtension.class)
class ExposureWarningsTests {

	private static List<String> warnings(CapturedOutput output) {
		return output.getAll()
			.lines()
			.filter(l -> l.contains(" WARN ") && l.contains("DualMapExposureWarnings"))
			.toList();
	}

	private static ConfigurableApplicationContext run(String... properties) {
		List<String> all = new ArrayList<>(List.of("server.port=0", "server.address=127.0.0.1", "dualmap.services=llm",
				"dualmap.scrape.enabled=false", "spring.cloud.gateway.server.webflux.routes[0].id=llm",
				"spring.cloud.gateway.server.webflux.routes[0].uri=lb://llm",
				"spring.cloud.gateway.server.webflux.routes[0].predicates[0]=Path=/v1/**"));
		all.addAll(List.of(properties));
		return new SpringApplicationBuilder(ExampleGatewayApplication.class).web(WebApplicationType.REACTIVE)
			.properties(all.toArray(String[]::new))
			.run();
	}

	@Test
	void theDefaultsWarnNothing(CapturedOutput output) {
		try (ConfigurableApplicationContext context = run("management.endpoints.web.exposure.include=health")) {
			assertThat(warnings(output)).isEmpty();
		}
	}

	@Test
	void aReadableEndpointOnTheClientPortAndTheHeadersAreWarned(CapturedOutput output) {
		try (ConfigurableApplicationContext context = run("management.endpoints.web.exposure.include=dualmap",
				"dualmap.headers.enabled=true")) {
			List<String> warnings = warnings(output);
			assertThat(warnings).hasSize(2);
			assertThat(warnings.get(0)).contains("dualmap actuator endpoint is readable without authentication")
				.contains("every instance's address");
			assertThat(warnings.get(1)).contains("dualmap.headers.enabled is true").contains("x-dualmap-instance");
		}
	}

	@Test
	void anUnrestrictedEndpointOnTheClientPortAndReplicaSyncAreWarned(CapturedOutput output) {
		try (ConfigurableApplicationContext context = run("management.endpoints.web.exposure.include=dualmap",
				"management.endpoint.dualmap.access=unrestricted", "dualmap.replicas.enabled=true",
				"dualmap.replicas.token=t0123456789abcdef", "dualmap.replicas.bootstrap=false",
				"dualmap.replicas.peers=http://10.1.2.3:8080,https://10.1.2.4:8443,http://127.0.0.1:8081")) {
			List<String> warnings = warnings(output);
			assertThat(warnings).hasSize(3);
			assertThat(warnings.get(0)).contains("drain operation")
				.contains("reachable without authentication on the client-facing port");
			assertThat(warnings.get(1)).contains("replica-sync path /dualmap/replicas/releases");
			assertThat(warnings.get(2)).contains("Replica peer http://10.1.2.3:8080 is plain http");
		}
	}

	@Test
	void anActuatorOnAPortOfItsOwnIsNotWarned(CapturedOutput output) {
		try (ConfigurableApplicationContext context = run("management.server.port=0",
				"management.server.address=127.0.0.1", "management.endpoints.web.exposure.include=dualmap",
				"management.endpoint.dualmap.access=unrestricted")) {
			assertThat(warnings(output)).isEmpty();
		}
	}

}
