package com.example.llmgateway;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The command-line tools' libraries (picocli, XChart, progressbar) are optional
 * dependencies: a gateway that depends on this jar does not get them. So nothing a
 * gateway loads may refer to them: the packages the auto-configuration brings in are
 * read, class file by class file, for a reference to any of their packages. Spring Cloud
 * Kubernetes is optional too, and only a class loaded when it is present refers to it.
 */
class LibraryDependenciesTests {

	/** What a gateway application loads (the auto-configurations and what they use). */
	static final List<String> GATEWAY_PACKAGES = List.of("autoconfigure", "actuate", "gateway", "core", "prompt",
			"stats", "replica");

	/** Packages of the optional libraries, as class files name them. */
	static final List<String> OPTIONAL = List.of("picocli/", "org/knowm/xchart", "me/tongfei/progressbar");

	/** Spring Cloud Kubernetes, optional for gateways that discover on Kubernetes. */
	static final String KUBERNETES = "org/springframework/cloud/kubernetes";

	@Test
	void onlyOneGuardedClassRefersToSpringCloudKubernetes() throws IOException {
		// It is loaded only when that library is present (InstanceMetadata checks).
		Path classes = Path.of("target", "classes", "io", "github", "dualmap");
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

	@Test
	void nothingAGatewayLoadsRefersToTheCommandLineLibraries() throws IOException {
		Path classes = Path.of("target", "classes", "io", "github", "dualmap");
		List<String> read = new ArrayList<>();
		List<String> offending = new ArrayList<>();
		for (String pkg : GATEWAY_PACKAGES) {
			try (Stream<Path> files = Files.walk(classes.resolve(pkg))) {
				for (Path file : files.filter(f -> f.toString().endsWith(".class")).toList()) {
					read.add(file.toString());
					// Class names in the constant pool are plain UTF-8 (modified UTF-8
					// equals it for these ASCII names).
					String pool = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
					for (String optional : OPTIONAL) {
						if (pool.contains(optional)) {
							offending.add(file + " -> " + optional);
						}
					}
				}
			}
		}
		assertThat(read).hasSizeGreaterThan(100);
		assertThat(offending).isEmpty();
		// The auto-configurations are among the packages read.
		String imports = Files.readString(Path.of("src", "main", "resources", "META-INF", "spring",
				"org.springframework.boot.autoconfigure.AutoConfiguration.imports"));
		assertThat(imports.lines().filter(l -> !l.isBlank()))
			.allSatisfy(c -> assertThat(GATEWAY_PACKAGES).anyMatch(p -> c.startsWith("io.github.dualmap." + p + ".")));
	}

}
