package io.github.dualmap.gateway;

import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.core.ReactorLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;

/**
 * Configuration of the load balancer child context of each DualMap service, registered
 * through a {@code LoadBalancerClientSpecification}. Deliberately not annotated with
 * {@code @Configuration}: it must never be picked up by component scanning, or its load
 * balancer would serve every service id.
 */
public class DualMapLoadBalancerClientConfiguration {

	/**
	 * Primary: an application's own default load balancer configuration
	 * ({@code @LoadBalancerClients(defaultConfiguration = ...)}) is in this child context
	 * too, and with two balancers Spring Cloud finds none, so every request of the pool
	 * would get "no instance".
	 */
	@Bean
	@Primary
	ReactorLoadBalancer<ServiceInstance> dualMapLoadBalancer(Environment environment,
			LoadBalancerClientFactory clientFactory, DualMapRegistry registry,
			ObjectProvider<ObservationRegistry> observations) {
		String serviceId = environment.getRequiredProperty(LoadBalancerClientFactory.PROPERTY_NAME);
		return new DualMapLoadBalancer(serviceId,
				clientFactory.getLazyProvider(serviceId, ServiceInstanceListSupplier.class), registry,
				observations.getIfAvailable(() -> ObservationRegistry.NOOP));
	}

}
