package io.github.dualmap.gateway;

import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.util.ClassUtils;

/**
 * The metadata DualMap reads from a discovered instance ({@code dualmap.weight},
 * {@code dualmap.metrics-path}, or the keys configured in their place).
 * <p>
 * Most discovery clients give each instance its own metadata. Spring Cloud Kubernetes
 * gives every instance of a Service the Service's labels and annotations, and a pod's own
 * in a separate map ({@code spring.cloud.kubernetes.discovery.metadata.add-pod-labels},
 * {@code add-pod-annotations}); so a pod's labels, then its annotations, are read first
 * when that library is present, then the instance's metadata.
 */
final class InstanceMetadata {

	private static final boolean KUBERNETES = ClassUtils.isPresent(
			"org.springframework.cloud.kubernetes.commons.discovery.KubernetesServiceInstance",
			InstanceMetadata.class.getClassLoader());

	private InstanceMetadata() {
	}

	/** The value of {@code key} for {@code instance}, or {@code null} if none is set. */
	static @Nullable String get(ServiceInstance instance, String key) {
		if (KUBERNETES) {
			String own = KubernetesPods.get(instance, key);
			if (own != null) {
				return own;
			}
		}
		Map<String, String> metadata = instance.getMetadata();
		return metadata == null ? null : metadata.get(key);
	}

}
