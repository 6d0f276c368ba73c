package io.github.dualmap.autoconfigure;

import java.util.List;

import io.github.dualmap.gateway.DualMapLoadBalancerClientConfiguration;

import org.springframework.beans.factory.support.BeanDefinitionBuilder;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClientSpecification;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Registers one {@link LoadBalancerClientSpecification} per service id in
 * {@code dualmap.services}, so each of those services (and only those) gets the DualMap
 * load balancer in its load balancer child context. The number of beans depends on
 * configuration, hence a registrar rather than {@code @Bean} methods.
 */
class DualMapLoadBalancerClientsRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware {

	private Environment environment;

	@Override
	public void setEnvironment(Environment environment) {
		this.environment = environment;
	}

	@Override
	public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
		List<String> services = Binder.get(this.environment)
			.bind("dualmap.services", Bindable.listOf(String.class))
			.orElse(List.of());
		for (String service : services) {
			if (service.isBlank()) {
				// DualMapProperties validation reports it with the property's name.
				continue;
			}
			String name = "dualmap." + service + "." + LoadBalancerClientSpecification.class.getSimpleName();
			if (!registry.containsBeanDefinition(name)) {
				registry.registerBeanDefinition(name,
						BeanDefinitionBuilder.genericBeanDefinition(LoadBalancerClientSpecification.class)
							.addConstructorArgValue(service)
							.addConstructorArgValue(new Class<?>[] { DualMapLoadBalancerClientConfiguration.class })
							.getBeanDefinition());
			}
		}
	}

}
