package io.github.dualmap.gateway;

import java.net.URI;
import java.util.List;
import java.util.Map;

import io.github.dualmap.stats.ScrapeTarget;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.kubernetes.commons.discovery.DefaultKubernetesServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Instance metadata as discovery clients hand it over: per instance (simple discovery,
 * Consul, Eureka), or, with Spring Cloud Kubernetes, the Service's for every pod and each
 * pod's own labels and annotations beside it.
 */
class InstanceMetadataTests {

	private static final String WEIGHT = "dualmap.weight";

	private static final String PATH = "dualmap.metrics-path";

	/** A pod of Service "llm" as Spring Cloud Kubernetes discovery gives it. */
	private static ServiceInstance pod(String name, String ip, Map<String, String> serviceMetadata,
			Map<String, String> labels, Map<String, String> annotations) {
		return new DefaultKubernetesServiceInstance(name, "llm", ip, 8000, serviceMetadata, false, "serving", null,
				Map.of("labels", labels, "annotations", annotations));
	}

	@Test
	void aPodsOwnLabelsThenAnnotationsComeBeforeItsServicesMetadata() {
		ServiceInstance pod = pod("vllm-h100-0", "10.1.0.5", Map.of(WEIGHT, "1", PATH, "/service-metrics"),
				Map.of(WEIGHT, "3"), Map.of(WEIGHT, "5", PATH, "/pod-metrics"));
		assertThat(InstanceMetadata.get(pod, WEIGHT)).isEqualTo("3");
		assertThat(InstanceMetadata.get(pod, PATH)).isEqualTo("/pod-metrics");
		ServiceInstance plain = pod("vllm-a100-0", "10.1.0.6", Map.of(WEIGHT, "1"), Map.of("app", "vllm"), Map.of());
		assertThat(InstanceMetadata.get(plain, WEIGHT)).isEqualTo("1");
		assertThat(InstanceMetadata.get(plain, PATH)).isNull();
	}

	@Test
	void otherDiscoveryClientsGiveEachInstanceItsOwnMetadata() {
		ServiceInstance instance = new DefaultServiceInstance("a", "llm", "10.0.0.1", 8000, false, Map.of(WEIGHT, "2"));
		assertThat(InstanceMetadata.get(instance, WEIGHT)).isEqualTo("2");
		assertThat(InstanceMetadata.get(instance, PATH)).isNull();
	}

	@Test
	void podLabelsSetRingWeightsAndTheirChangeIsAMembershipChange() {
		ServicePool service = DualMapRegistry.builder()
			.services("llm")
			.weightMetadataKey(WEIGHT)
			.build()
			.service("llm");
		// Two Deployments behind one Service: the H100 pods carry a weight label.
		Map<String, String> serviceLabels = Map.of("app", "vllm");
		assertThat(service
			.updateMembership(List.of(pod("h100-0", "10.1.0.5", serviceLabels, Map.of(WEIGHT, "2"), Map.of()),
					pod("a100-0", "10.1.0.6", serviceLabels, Map.of(), Map.of()))))
			.isTrue();
		assertThat(service.instancePool().instance("h100-0").weight()).isEqualTo(2.0);
		assertThat(service.instancePool().instance("a100-0").weight()).isEqualTo(1.0);
		assertThat(service
			.updateMembership(List.of(pod("h100-0", "10.1.0.5", serviceLabels, Map.of(WEIGHT, "2"), Map.of()),
					pod("a100-0", "10.1.0.6", serviceLabels, Map.of(), Map.of()))))
			.isFalse();
		assertThat(service
			.updateMembership(List.of(pod("h100-0", "10.1.0.5", serviceLabels, Map.of(WEIGHT, "4"), Map.of()),
					pod("a100-0", "10.1.0.6", serviceLabels, Map.of(), Map.of()))))
			.isTrue();
		assertThat(service.instancePool().instance("h100-0").weight()).isEqualTo(4.0);
	}

	@Test
	void anEditOfAPodsOwnAnnotationsOrOfTheMetadataAloneIsAMembershipChange() {
		ServicePool service = DualMapRegistry.builder()
			.services("llm")
			.weightMetadataKey(WEIGHT)
			.build()
			.service("llm");
		Map<String, String> serviceLabels = Map.of("app", "vllm");
		assertThat(service.updateMembership(List.of(pod("h100-0", "10.1.0.5", serviceLabels, Map.of(), Map.of()))))
			.isTrue();
		assertThat(service.updateMembership(List.of(pod("h100-0", "10.1.0.5", serviceLabels, Map.of(), Map.of()))))
			.isFalse();
		assertThat(service.updateMembership(
				List.of(pod("h100-0", "10.1.0.5", serviceLabels, Map.of(), Map.of(PATH, "/actuator/prometheus")))))
			.isTrue();
		assertThat(service.updateMembership(List.of(pod("h100-0", "10.1.0.5", Map.of("app", "vllm", PATH, "/m"),
				Map.of(), Map.of(PATH, "/actuator/prometheus")))))
			.isTrue();
		assertThat(service.updateMembership(List.of(pod("h100-0", "10.1.0.5", Map.of("app", "vllm", PATH, "/m"),
				Map.of(), Map.of(PATH, "/actuator/prometheus")))))
			.isFalse();
	}

	@Test
	void aPodAnnotationSetsItsMetricsPath() {
		DualMapRegistry registry = DualMapRegistry.builder().services("llm").weightMetadataKey(WEIGHT).build();
		EngineScraping scraping = new EngineScraping(registry, listener -> {
			throw new IllegalStateException("not started in this test");
		}, id -> "/metrics", PATH);
		List<ScrapeTarget> targets = scraping.targets("llm",
				List.of(pod("sidecar-0", "10.1.0.7", Map.of(), Map.of(), Map.of(PATH, "/actuator/prometheus")),
						pod("plain-0", "10.1.0.8", Map.of(), Map.of(), Map.of())));
		assertThat(targets).extracting(ScrapeTarget::metricsUri)
			.containsExactly(URI.create("http://10.1.0.7:8000/actuator/prometheus"),
					URI.create("http://10.1.0.8:8000/metrics"));
	}

}
