package io.github.dualmap.gateway;

import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

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
 * <p>
 * An edit of any of it on an instance that stays (a pod annotation naming another metrics
 * path) is a membership change ({@link #same}, {@link #copy}), so the pool and scraping
 * read the new values at the next list.
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

	/**
	 * Whether two instances carry the same metadata (with Spring Cloud Kubernetes, the
	 * same pod labels and annotations too): while they do, every key read through
	 * {@link #get} reads the same. Compares the maps in place, copying nothing.
	 */
	static boolean same(ServiceInstance a, ServiceInstance b) {
		return Objects.equals(a.getMetadata(), b.getMetadata()) && (!KUBERNETES || KubernetesPods.same(a, b));
	}

	/**
	 * A copy of the metadata of {@code instance} (and a pod's own labels and annotations)
	 * that two instances share exactly when everything {@link #get} reads is the same, to
	 * compare memberships by.
	 */
	static Copy copy(ServiceInstance instance) {
		return new Copy(copyOf(instance.getMetadata()), KUBERNETES ? KubernetesPods.copy(instance) : Map.of());
	}

	/** Keeps {@code null} values, which {@link Map#copyOf} refuses. */
	static Map<String, String> copyOf(@Nullable Map<String, String> metadata) {
		return metadata == null || metadata.isEmpty() ? Map.of() : Collections.unmodifiableMap(new HashMap<>(metadata));
	}

	/**
	 * The metadata of one instance, frozen.
	 *
	 * @param metadata the instance's metadata
	 * @param pod a pod's own metadata by kind ({@code labels}, {@code annotations});
	 * empty outside Kubernetes
	 */
	record Copy(Map<String, String> metadata, Map<String, Map<String, String>> pod) {
	}

}
