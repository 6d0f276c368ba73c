package io.github.dualmap.actuate;

import io.github.dualmap.gateway.RequestBuffers;
import io.micrometer.core.instrument.binder.BaseUnits;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * The request bodies held in memory against {@code dualmap.max-buffered-size}:
 * {@code dualmap.request.buffers.used} and {@code .limit} (bytes) and
 * {@code dualmap.request.buffers.rejections} (requests answered 503 because the budget
 * was full) and {@code .unparsed} (requests routed without their prompt: parsing their
 * body could never fit in it).
 */
public final class RequestBuffersMeters implements MeterBinder {

	private final RequestBuffers buffers;

	public RequestBuffersMeters(RequestBuffers buffers) {
		this.buffers = buffers;
	}

	@Override
	public void bindTo(MeterRegistry meters) {
		Gauge.builder("dualmap.request.buffers.used", this.buffers, RequestBuffers::used)
			.baseUnit(BaseUnits.BYTES)
			.description("Request body bytes the gateway holds in memory now (read, queued or in flight)")
			.register(meters);
		Gauge.builder("dualmap.request.buffers.limit", this.buffers, RequestBuffers::limit)
			.baseUnit(BaseUnits.BYTES)
			.description("dualmap.max-buffered-size")
			.register(meters);
		FunctionCounter.builder("dualmap.request.buffers.rejections", this.buffers, RequestBuffers::rejections)
			.description("Requests answered 503 because the request body budget was full")
			.register(meters);
		FunctionCounter.builder("dualmap.request.buffers.unparsed", this.buffers, RequestBuffers::unparsed)
			.description("Requests routed by load without their prompt: parsing their body could never fit "
					+ "in the request body budget")
			.register(meters);
	}

}
