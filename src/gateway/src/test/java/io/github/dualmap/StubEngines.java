package io.github.dualmap;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.MergedContextConfiguration;
import org.springframework.util.ReflectionUtils;

/**
 * The {@link Discovered} engines of a test class: listed in simple discovery of its
 * context, each address also as {@code stub-engines.NAME} (a
 * {@link ContextCustomizerFactory}, so that classes with the same engines and settings
 * share one cached context), reset before each test and stopped after the class (a JUnit
 * extension). {@link GatewayIntegrationTest} registers both.
 */
public final class StubEngines implements ContextCustomizerFactory, BeforeEachCallback, AfterAllCallback {

	/** The engines of every {@link Discovered} field of {@code testClass}, by service. */
	static Map<String, List<StubEngine>> of(Class<?> testClass) {
		Map<String, List<StubEngine>> engines = new LinkedHashMap<>();
		for (Engines field : fields(testClass)) {
			for (String id : field.services()) {
				engines.computeIfAbsent(id, s -> new ArrayList<>()).addAll(field.engines());
			}
		}
		return engines;
	}

	/** Each {@link Discovered} field of {@code testClass}, in order. */
	private static List<Engines> fields(Class<?> testClass) {
		List<Engines> fields = new ArrayList<>();
		for (Class<?> c = testClass; c != null && c != Object.class; c = c.getSuperclass()) {
			for (Field field : c.getDeclaredFields()) {
				Discovered discovered = field.getAnnotation(Discovered.class);
				if (discovered == null) {
					continue;
				}
				if (!Modifier.isStatic(field.getModifiers())) {
					throw new IllegalStateException("@Discovered field " + field + " must be static");
				}
				ReflectionUtils.makeAccessible(field);
				Object value = ReflectionUtils.getField(field, null);
				List<StubEngine> engines = new ArrayList<>();
				if (value instanceof StubEngine engine) {
					engines.add(engine);
				}
				else if (value instanceof List<?> list) {
					list.forEach(e -> engines.add((StubEngine) e));
				}
				else {
					throw new IllegalStateException(
							"@Discovered field " + field + " holds neither a StubEngine nor a List<StubEngine>");
				}
				fields.add(new Engines(discovered.value(), engines));
			}
		}
		return fields;
	}

	@Override
	public ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		Map<String, Object> properties = new LinkedHashMap<>();
		// ${stub-engines.NAME}: the address of the class's one engine of that name.
		Map<String, List<StubEngine>> byName = new LinkedHashMap<>();
		engines(testClass).forEach(e -> byName.computeIfAbsent(e.name, n -> new ArrayList<>()).add(e));
		byName.forEach((name, named) -> {
			if (named.size() == 1) {
				properties.put("stub-engines." + name, named.get(0).uri());
			}
		});
		of(testClass).forEach((service, engines) -> {
			for (int i = 0; i < engines.size(); i++) {
				properties.put("spring.cloud.discovery.client.simple.instances." + service + "[" + i + "].uri",
						engines.get(i).uri());
			}
		});
		return properties.isEmpty() ? null : new Addresses(properties);
	}

	@Override
	public void beforeEach(ExtensionContext context) {
		engines(context.getRequiredTestClass()).forEach(StubEngine::reset);
	}

	@Override
	public void afterAll(ExtensionContext context) {
		engines(context.getRequiredTestClass()).forEach(StubEngine::stop);
	}

	/**
	 * Each engine of the class once, though it may be an instance of several services.
	 */
	private static Set<StubEngine> engines(Class<?> testClass) {
		Set<StubEngine> engines = new LinkedHashSet<>();
		fields(testClass).forEach(field -> engines.addAll(field.engines()));
		return engines;
	}

	/**
	 * The engines of one {@link Discovered} field and the services they are instances of.
	 */
	private record Engines(String[] services, List<StubEngine> engines) {
	}

	/** The engines' addresses as the highest-priority property source. */
	private record Addresses(Map<String, Object> properties) implements ContextCustomizer {

		@Override
		public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration merged) {
			context.getEnvironment()
				.getPropertySources()
				.addFirst(new MapPropertySource("stubEngines", this.properties));
		}

	}

}
