package io.github.dualmap.emulator.demo;

import java.util.List;

import io.github.dualmap.emulator.EmulatorPool;
import reactor.core.publisher.Flux;

import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.discovery.ReactiveDiscoveryClient;

/**
 * Discovery of the demo pool ({@value #SERVICE_ID}): the instances the demo started, on
 * the ports they bound, whatever {@code dualmap.demo.instances} and {@code base-port}
 * say. The composite discovery clients merge it with the others, so the load balancer's
 * instance list, and the DualMap pool membership that follows it, see exactly these
 * instances.
 */
final class DemoPoolDiscovery {

	/** The service id the demo's routes send to ({@code lb://demo-pool}). */
	static final String SERVICE_ID = "demo-pool";

	private static final String DESCRIPTION = "DualMap demo pool of emulated instances";

	private DemoPoolDiscovery() {
	}

	/** Each started instance, named {@code emulator-<port>}. */
	static List<ServiceInstance> instances(EmulatorPool pool) {
		return pool.servers()
			.stream()
			.<ServiceInstance>map(server -> new DefaultServiceInstance("emulator-" + server.port(), SERVICE_ID,
					server.settings().host(), server.port(), false))
			.toList();
	}

	/** The blocking client, for what reads discovery without Reactor. */
	static DiscoveryClient blocking(EmulatorPool pool) {
		List<ServiceInstance> instances = instances(pool);
		return new DiscoveryClient() {

			@Override
			public String description() {
				return DESCRIPTION;
			}

			@Override
			public List<ServiceInstance> getInstances(String serviceId) {
				return SERVICE_ID.equals(serviceId) ? instances : List.of();
			}

			@Override
			public List<String> getServices() {
				return List.of(SERVICE_ID);
			}

		};
	}

	/** The reactive client, which the load balancer reads in a reactive gateway. */
	static ReactiveDiscoveryClient reactive(EmulatorPool pool) {
		List<ServiceInstance> instances = instances(pool);
		return new ReactiveDiscoveryClient() {

			@Override
			public String description() {
				return DESCRIPTION;
			}

			@Override
			public Flux<ServiceInstance> getInstances(String serviceId) {
				return SERVICE_ID.equals(serviceId) ? Flux.fromIterable(instances) : Flux.empty();
			}

			@Override
			public Flux<String> getServices() {
				return Flux.just(SERVICE_ID);
			}

		};
	}

}
