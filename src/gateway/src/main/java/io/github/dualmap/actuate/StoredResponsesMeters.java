package io.github.dualmap.actuate;

import io.github.dualmap.gateway.StoredResponses;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * The gauge {@code dualmap.stored.responses}: Responses API responses whose instance this
 * gateway remembers (continuations of them are pinned there).
 */
public final class StoredResponsesMeters implements MeterBinder {

	private final StoredResponses stored;

	public StoredResponsesMeters(StoredResponses stored) {
		this.stored = stored;
	}

	@Override
	public void bindTo(MeterRegistry meters) {
		Gauge.builder("dualmap.stored.responses", this.stored, StoredResponses::size)
			.description("Responses API responses whose instance is remembered for their continuations")
			.register(meters);
	}

}
