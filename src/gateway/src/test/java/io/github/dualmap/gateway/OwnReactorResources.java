package io.github.dualmap.gateway;

import org.springframework.context.annotation.Bean;
import org.springframework.http.client.ReactorResourceFactory;

/**
 * Reactor Netty resources of one context alone, for tests that close a gateway while
 * others live in the same JVM: closing a context that uses the global resources disposes
 * them, and with them the servers of every other context (the test framework caches other
 * tests' contexts). Imported, not annotated, so no component scan picks it up.
 */
class OwnReactorResources {

	@Bean
	ReactorResourceFactory reactorResourceFactory() {
		ReactorResourceFactory factory = new ReactorResourceFactory();
		factory.setUseGlobalResources(false);
		return factory;
	}

}
