package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.IntStream;

import io.github.dualmap.Discovered;
import io.github.dualmap.GatewayIntegrationTest;
import io.github.dualmap.StubEngine;
import io.github.dualmap.WebTestClients;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A 16-instance pool after traffic, with three SLO classes: every meter the library
 * registers has a description, the latency histograms have the documented buckets (the
 * SLO objectives among them), and the exported {@code dualmap_*} Prometheus series stay
 * under the budget operations.md states: {@value #SERIES_BUDGET} for the pool.
 */
@GatewayIntegrationTest(properties = { "dualmap.scrape.interval=100ms", "dualmap.slo.classes.interactive.ttft=800ms",
		"dualmap.slo.classes.standard.ttft=3s", "dualmap.slo.classes.batch.ttft=20s",
		// Replica sync's meters too (no peer).
		"dualmap.replicas.enabled=true", "dualmap.replicas.token=t0123456789abcdef", "dualmap.replicas.bootstrap=false",
		"management.endpoints.web.exposure.include=prometheus" })
@AutoConfigureWebTestClient(timeout = "60s")
class MeterBudgetIntegrationTests {

	/** Exported dualmap_* series of one 16-instance pool, at most. */
	static final int SERIES_BUDGET = 1000;

	static final int INSTANCES = 16;

	@Discovered
	static final List<StubEngine> ENGINES = IntStream.range(0, INSTANCES)
		.mapToObj(i -> new StubEngine("e" + i))
		.toList();

	@Autowired
	WebTestClient client;

	@Autowired
	MeterRegistry meters;

	@Autowired
	DualMapRegistry registry;

	void chat(int i, boolean stream) {
		this.client.post()
			.uri("/v1/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.header("x-slo-class", List.of("interactive", "standard", "batch").get(i % 3))
			.bodyValue("{\"model\":\"m\",\"stream\":" + stream + ",\"messages\":[{\"role\":\"system\",\"content\":\""
					+ "tenant " + i + " ".repeat(200) + "\"},{\"role\":\"user\",\"content\":\"q" + i + "\"}]}")
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.returnResult();
	}

	private boolean hasTtft(StubEngine e) {
		Timer ttft = this.meters.find("dualmap.ttft").tag("instance.id", e.instanceId()).timer();
		return ttft != null && ttft.count() > 0;
	}

	@Test
	void everyMeterIsDescribedAndThePoolStaysUnderItsSeriesBudget() {
		ServicePool service = this.registry.service("llm");
		await().atMost(Duration.ofSeconds(10)).until(() -> service.instancePool().size() == INSTANCES);
		// Until every instance has had streamed requests: every per-instance meter
		// exists. A non-streamed answer records no TTFT (its first byte comes only when
		// generation ended; the queue estimates its prefill's end instead), so an
		// instance
		// that served only those has no TTFT histogram yet.
		for (int i = 0; i < 2000 && ENGINES.stream().anyMatch(e -> e.served.get() < 2 || !hasTtft(e)); i++) {
			chat(i, i % 2 == 0);
		}
		assertThat(ENGINES).allSatisfy(e -> {
			assertThat(e.served.get()).as(e.name).isGreaterThanOrEqualTo(2);
			assertThat(hasTtft(e)).as(e.name + " has a TTFT histogram").isTrue();
		});

		List<String> undescribed = new ArrayList<>();
		for (Meter m : this.meters.getMeters()) {
			if (m.getId().getName().startsWith("dualmap.") && m.getId().getDescription() == null) {
				undescribed.add(m.getId().getName());
			}
		}
		assertThat(this.meters.getMeters()).anyMatch(m -> m.getId().getName().equals("dualmap.dispatch"))
			.anyMatch(m -> m.getId().getName().startsWith("dualmap.replicas."));
		assertThat(undescribed).isEmpty();

		String exported = WebTestClients.okBody(this.client, "/actuator/prometheus");
		Map<String, Integer> series = new TreeMap<>();
		for (String line : exported.split("\n")) {
			if (line.startsWith("dualmap_")) {
				series.merge(line.replaceAll("[{ ].*", ""), 1, Integer::sum);
			}
			else if (line.startsWith("# HELP dualmap_")) {
				assertThat(line).as("a description, not a placeholder").doesNotEndWith(" ");
			}
		}
		int total = series.values().stream().mapToInt(Integer::intValue).sum();
		// Buckets: 10 defaults and the 3 class objectives and the default 5 s one (a
		// default bound too): 13, and +Inf.
		String instance = ENGINES.get(0).instanceId();
		assertThat(exported.lines()
			.filter(l -> l.startsWith("dualmap_ttft_seconds_bucket{") && l.contains("\"" + instance + "\""))
			.count()).isEqualTo(14);
		assertThat(exported).contains("le=\"0.8\"").contains("le=\"3.0\"").contains("le=\"20.0\"");
		System.out.println("dualmap_* series for " + INSTANCES + " instances: " + total + " " + series);
		assertThat(total).isLessThanOrEqualTo(SERIES_BUDGET);
	}

}
