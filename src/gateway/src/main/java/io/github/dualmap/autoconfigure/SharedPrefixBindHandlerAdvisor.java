package io.github.dualmap.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.ConfigurationPropertiesBindHandlerAdvisor;
import org.springframework.boot.context.properties.bind.AbstractBindHandler;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;

/**
 * Leaves the keys that another {@code @ConfigurationProperties} class of the application
 * binds under {@code dualmap.*} (a {@code @ConfigurationProperties("dualmap.<name>")}
 * bean, such as the demo's {@code dualmap.demo}) out of {@link DualMapProperties}' check
 * for unknown keys, which Spring Boot applies to every key under its prefix: an unknown
 * key of the gateway's still fails the startup, naming it, and a class of its own can
 * still claim a group of {@code dualmap.*} keys.
 */
final class SharedPrefixBindHandlerAdvisor implements ConfigurationPropertiesBindHandlerAdvisor {

	private static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of(DualMapProperties.PREFIX);

	private final ConfigurableListableBeanFactory beanFactory;

	SharedPrefixBindHandlerAdvisor(ConfigurableListableBeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public BindHandler apply(BindHandler bindHandler) {
		return new AbstractBindHandler(bindHandler) {

			@Override
			public void onFinish(ConfigurationPropertyName name, Bindable<?> target, BindContext context,
					@Nullable Object result) throws Exception {
				Class<?> type = target.getType().resolve();
				boolean root = context.getDepth() == 0 && type != null
						&& DualMapProperties.class.isAssignableFrom(type);
				// At the root the unknown-key check (further in) reads the sources.
				super.onFinish(name, target, root ? withoutOthers(context) : context, result);
			}

		};
	}

	/** {@code context} whose sources hide the keys other classes bind. */
	private BindContext withoutOthers(BindContext context) {
		List<ConfigurationPropertyName> others = otherPrefixes();
		if (others.isEmpty()) {
			return context;
		}
		List<ConfigurationPropertySource> sources = new ArrayList<>();
		for (ConfigurationPropertySource source : context.getSources()) {
			sources.add(source.filter(key -> others.stream().noneMatch(other -> other.isAncestorOf(key))));
		}
		return new BindContext() {

			@Override
			public Binder getBinder() {
				return context.getBinder();
			}

			@Override
			public int getDepth() {
				return context.getDepth();
			}

			@Override
			public Iterable<ConfigurationPropertySource> getSources() {
				return sources;
			}

			@Override
			public @Nullable ConfigurationProperty getConfigurationProperty() {
				return context.getConfigurationProperty();
			}

		};
	}

	/**
	 * The prefixes under {@code dualmap} of the application's other
	 * {@code @ConfigurationProperties} beans, read from their definitions (no bean is
	 * created).
	 */
	private List<ConfigurationPropertyName> otherPrefixes() {
		List<ConfigurationPropertyName> prefixes = new ArrayList<>();
		for (String bean : this.beanFactory.getBeanDefinitionNames()) {
			if (this.beanFactory.getBeanDefinition(bean).isAbstract()) {
				continue;
			}
			ConfigurationProperties annotation = this.beanFactory.findAnnotationOnBean(bean,
					ConfigurationProperties.class, false);
			if (annotation == null) {
				continue;
			}
			String prefix = annotation.prefix().isEmpty() ? annotation.value() : annotation.prefix();
			ConfigurationPropertyName name = ConfigurationPropertyName.ofIfValid(prefix);
			if (name != null && ROOT.isAncestorOf(name)) {
				prefixes.add(name);
			}
		}
		return prefixes;
	}

}
