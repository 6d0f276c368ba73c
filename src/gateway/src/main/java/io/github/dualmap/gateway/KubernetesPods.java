package io.github.dualmap.gateway;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.kubernetes.commons.discovery.KubernetesServiceInstance;

/**
 * A pod's own labels and annotations, as Spring Cloud Kubernetes discovery hands them
 * over. Loaded only when that library is on the class path ({@link InstanceMetadata}).
 */
final class KubernetesPods {

	private KubernetesPods() {
	}

	static @Nullable String get(ServiceInstance instance, String key) {
		Map<String, Map<String, String>> own = own(instance);
		if (own == null) {
			return null;
		}
		for (String kind : new String[] { "labels", "annotations" }) {
			Map<String, String> values = own.get(kind);
			String value = values == null ? null : values.get(key);
			if (value != null) {
				return value;
			}
		}
		return null;
	}

	/** Whether two instances have the same pod labels and annotations. */
	static boolean same(ServiceInstance a, ServiceInstance b) {
		return Objects.equals(own(a), own(b));
	}

	/** A frozen copy of the pod labels and annotations of {@code instance}. */
	static Map<String, Map<String, String>> copy(ServiceInstance instance) {
		Map<String, Map<String, String>> own = own(instance);
		if (own == null || own.isEmpty()) {
			return Map.of();
		}
		Map<String, Map<String, String>> copy = new HashMap<>();
		own.forEach((kind, values) -> copy.put(kind, InstanceMetadata.copyOf(values)));
		return Collections.unmodifiableMap(copy);
	}

	private static @Nullable Map<String, Map<String, String>> own(ServiceInstance instance) {
		return instance instanceof KubernetesServiceInstance pod ? pod.podMetadata() : null;
	}

}
