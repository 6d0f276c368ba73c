package io.github.dualmap.gateway;

import java.util.Map;

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
		if (!(instance instanceof KubernetesServiceInstance pod)) {
			return null;
		}
		Map<String, Map<String, String>> own = pod.podMetadata();
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

}
