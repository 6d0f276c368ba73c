package io.github.dualmap.actuate;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dualmap.core.EngineSnapshot;
import io.github.dualmap.core.InstanceState;
import io.github.dualmap.core.NanoClock;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.ServicePool;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.junit.jupiter.api.Test;

import org.springframework.cloud.client.DefaultServiceInstance;

import static org.assertj.core.api.Assertions.assertThat;

/** The actuator view of one instance, on a clock the test controls. */
class PoolInspectionTests {

	private final AtomicLong now = new AtomicLong(1_000_000_000L);

	private final NanoClock clock = this.now::get;

	private final DualMapRegistry registry = new DualMapRegistry(SchedulerSettings.ofDefaults(), "dualmap",
			List.of("llm"), "dualmap.weight", CircuitBreakerConfig.ofDefaults(), this.clock);

	private final ServicePool pool = this.registry.pool("llm");

	@Test
	void theAgeOfEngineStateIsNeverNegative() {
		this.pool.updateMembership(List.of(new DefaultServiceInstance("i1", "llm", "10.0.0.1", 8000, false, Map.of())));
		InstanceState s = this.pool.pool().instance("i1");
		// Scraped 3 ms ago, then a scrape that lands while the view is being built: its
		// time is after the view's clock reading.
		s.updateEngine(new EngineSnapshot(this.now.get() - 3_000_000, 0, 1, 0.25, 100, 40, 0));
		assertThat(PoolInspection.instance(this.pool, s).engine().ageMs()).isEqualTo(3);
		s.updateEngine(new EngineSnapshot(this.now.get() + 4_000_000, 0, 1, 0.25, 100, 40, 0));
		assertThat(PoolInspection.instance(this.pool, s).engine().ageMs()).isZero();
	}

}
