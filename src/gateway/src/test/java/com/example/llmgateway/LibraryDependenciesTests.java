package com.example.llmgateway;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import io.github.dualmap.autoconfigure.DualMapAutoConfiguration;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What a gateway gets with this library: its own packages, none of the tools' (the
 * simulator, emulator, engine model, overhead harness and demo are dualmap-tools) and
 * none of their libraries. The consumer build (src/it) checks the same on a real
 * application's resolved classpath; this test keeps the library's own build honest.
 * Spring Cloud Kubernetes is optional, and only a class loaded when it is present refers
 * to it.
 */
class LibraryDependenciesTests {

	/** The library's packages: what a gateway application loads. */
	static final List<String> GATEWAY_PACKAGES = List.of("autoconfigure", "actuate", "gateway", "core", "prompt",
			"stats", "replica", "tenant");

	/** Spring Cloud Kubernetes, optional for gateways that discover on Kubernetes. */
	static final String KUBERNETES = "org/springframework/cloud/kubernetes";

	/** The library's compiled classes, wherever this build puts them. */
	static Path classes() {
		try {
			return Path.of(DualMapAutoConfiguration.class.getProtectionDomain().getCodeSource().getLocation().toURI())
				.resolve(Path.of("io", "github", "dualmap"));
		}
		catch (URISyntaxException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Test
	void onlyOneGuardedClassRefersToSpringCloudKubernetes() throws IOException {
		// It is loaded only when that library is present (InstanceMetadata checks).
		Path classes = classes();
		List<String> referring = new ArrayList<>();
		try (Stream<Path> files = Files.walk(classes)) {
			for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
				if (new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1).contains(KUBERNETES)) {
					referring.add(classes.relativize(file).toString());
				}
			}
		}
		assertThat(referring).containsExactly(Path.of("gateway", "KubernetesPods.class").toString());
	}

	/**
	 * Spring Data Redis (and Lettuce) is optional, for budgets and the fairness account
	 * shared through Redis: only the Redis store, the fairness sync and the
	 * configurations guarded by its presence (which alone create them) refer to it.
	 */
	@Test
	void onlyGuardedClassesReferToRedis() throws IOException {
		Path classes = classes();
		List<String> referring = new ArrayList<>();
		try (Stream<Path> files = Files.walk(classes)) {
			for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
				String pool = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
				if (pool.contains("org/springframework/data/redis") || pool.contains("io/lettuce")
						|| pool.contains("org/springframework/boot/data/redis")) {
					referring.add(classes.relativize(file).toString());
				}
			}
		}
		assertThat(referring).containsExactlyInAnyOrder(Path.of("tenant", "RedisBudgetStore.class").toString(),
				Path.of("tenant", "RedisFairnessSync.class").toString(),
				Path.of("autoconfigure", "DualMapTenantsAutoConfiguration$RedisStoreConfiguration.class").toString(),
				Path.of("autoconfigure", "DualMapTenantsAutoConfiguration$LettuceConfiguration.class").toString());
	}

	@Test
	void theLibraryHoldsItsOwnPackagesOnly() throws IOException {
		try (Stream<Path> packages = Files.list(classes())) {
			assertThat(packages.filter(Files::isDirectory).map(p -> p.getFileName().toString()))
				.containsExactlyInAnyOrderElementsOf(GATEWAY_PACKAGES);
		}
		try (Stream<Path> files = Files.list(classes())) {
			assertThat(files.filter(Files::isRegularFile)).isEmpty();
		}
		assertThat(getClass().getClassLoader().getResource("dualmap-demo.yml")).isNull();
		// The auto-configurations are among the library's packages.
		String imports;
		try (InputStream in = getClass().getClassLoader()
			.getResourceAsStream("META-INF/spring/org.springframework.boot.autoconfigure.AutoConfiguration.imports")) {
			assertThat(in).isNotNull();
			imports = new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		assertThat(imports.lines().filter(l -> !l.isBlank())).isNotEmpty()
			.allSatisfy(c -> assertThat(GATEWAY_PACKAGES).anyMatch(p -> c.startsWith("io.github.dualmap." + p + ".")));
	}

	@Test
	void noCommandLineOrChartingLibraryIsOnTheClasspath() {
		for (String name : List.of("picocli.CommandLine", "org.knowm.xchart.XYChart",
				"me.tongfei.progressbar.ProgressBar", "kotlin.Unit")) {
			assertThatExceptionOfType(ClassNotFoundException.class)
				.isThrownBy(() -> Class.forName(name, false, getClass().getClassLoader()));
		}
	}

}
