package io.github.dualmap.gateway;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RequestBuffersTests {

	static MockServerWebExchange exchange() {
		return MockServerWebExchange.from(MockServerHttpRequest.post("/v1/chat/completions"));
	}

	/**
	 * Parsing a large body takes about six times its size while it runs: that working
	 * memory comes from the budget too (a few 32 MB bodies parsed at once exhausted a
	 * small heap while the budget counted only their bytes).
	 */
	@Test
	void parsingALargeBodyTakesItsWorkingMemoryFromTheBudgetWhileItRuns() {
		int size = BodyEncodings.INLINE_BYTES + 1;
		long working = (long) BodyLimits.PARSE_BYTES_PER_BODY_BYTE * size;
		RequestBuffers buffers = new RequestBuffers(size + working);
		BodyLimits limits = new BodyLimits(size, buffers, BodyLimits.DEFAULT_READ_TIMEOUT);
		MockServerWebExchange exchange = exchange();
		assertThat(buffers.reserve(exchange, size)).isTrue();
		assertThat(limits.whileParsing(exchange, size, buffers::used, () -> -1L)).isEqualTo(size + working);
		assertThat(buffers.used()).isEqualTo(size);
		// Small bodies are parsed without accounting.
		assertThat(limits.whileParsing(exchange, 1000, buffers::used, () -> -1L)).isEqualTo(size);
		// Another exchange's parse while the budget cannot hold both: 503, nothing taken.
		MockServerWebExchange other = exchange();
		assertThat(buffers.reserve(other, 10)).isTrue();
		assertThatExceptionOfType(RequestBuffers.FullException.class)
			.isThrownBy(() -> limits.whileParsing(exchange, size, buffers::used, () -> -1L));
		assertThat(buffers.used()).isEqualTo(size + 10);
		buffers.release(other);
		// A parse the budget could never hold beside the body: done without (routed by
		// load), nothing taken.
		RequestBuffers small = new RequestBuffers(working);
		BodyLimits tight = new BodyLimits(size, small, BodyLimits.DEFAULT_READ_TIMEOUT);
		assertThat(small.reserve(exchange, size)).isTrue();
		assertThat(tight.whileParsing(exchange, size, small::used, () -> -1L)).isEqualTo(-1L);
		assertThat(small.used()).isEqualTo(size);
		assertThat(small.unparsed()).isOne();
		assertThat(buffers.unparsed()).isZero();
	}

	@Test
	void aParseOfKnownWorkingMemoryTakesItFromTheBudgetWhateverTheBodysSize() {
		RequestBuffers buffers = new RequestBuffers(1000);
		BodyLimits limits = new BodyLimits(100, buffers, BodyLimits.DEFAULT_READ_TIMEOUT);
		MockServerWebExchange exchange = exchange();
		assertThat(buffers.reserve(exchange, 100)).isTrue();
		assertThat(limits.withWorkingMemory(exchange, 800, buffers::used, () -> -1L)).isEqualTo(900);
		assertThat(buffers.used()).isEqualTo(100);
		MockServerWebExchange other = exchange();
		assertThat(buffers.reserve(other, 200)).isTrue();
		assertThatExceptionOfType(RequestBuffers.FullException.class)
			.isThrownBy(() -> limits.withWorkingMemory(exchange, 800, buffers::used, () -> -1L));
		// More than the budget could ever hold beside the body: not parsed.
		assertThat(limits.withWorkingMemory(exchange, 901, buffers::used, () -> -1L)).isEqualTo(-1L);
		assertThat(buffers.used()).isEqualTo(300);
	}

	@Test
	void reservesUpToTheLimitAndCountsWhatItRefuses() {
		RequestBuffers buffers = new RequestBuffers(100);
		MockServerWebExchange a = exchange();
		MockServerWebExchange b = exchange();
		assertThat(buffers.reserve(a, 60)).isTrue();
		assertThat(buffers.reserve(b, 40)).isTrue();
		assertThat(buffers.used()).isEqualTo(100);
		assertThat(buffers.reserve(b, 1)).isFalse();
		assertThat(buffers.rejections()).isEqualTo(1);
		// A refused reservation takes nothing.
		assertThat(buffers.used()).isEqualTo(100);
		buffers.release(a);
		assertThat(buffers.used()).isEqualTo(40);
		assertThat(buffers.reserve(b, 60)).isTrue();
		buffers.release(b);
		assertThat(buffers.used()).isZero();
	}

	@Test
	void anEndedExchangeReservesNothingMoreAndReleasingTwiceGivesBackOnce() {
		RequestBuffers buffers = new RequestBuffers(100);
		MockServerWebExchange a = exchange();
		assertThat(buffers.reserve(a, 30)).isTrue();
		buffers.release(a);
		buffers.release(a);
		assertThat(buffers.used()).isZero();
		// A read still running when its client went away.
		assertThat(buffers.reserve(a, 30)).isFalse();
		assertThat(buffers.used()).isZero();
		assertThat(buffers.rejections()).isZero();
		// Never reserved: nothing to give back.
		buffers.release(exchange());
		assertThat(buffers.used()).isZero();
	}

	@Test
	void concurrentExchangesNeverHoldMoreThanTheLimitAndGiveEverythingBack() throws Exception {
		RequestBuffers buffers = new RequestBuffers(10_000);
		AtomicLong over = new AtomicLong();
		AtomicLong granted = new AtomicLong();
		ExecutorService threads = Executors.newFixedThreadPool(8);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < 8; t++) {
				int seed = t;
				done.add(threads.submit(() -> {
					Random random = new Random(seed);
					for (int i = 0; i < 2_000; i++) {
						MockServerWebExchange exchange = exchange();
						for (int chunk = 0; chunk < 4; chunk++) {
							if (buffers.reserve(exchange, 1 + random.nextInt(4_000))) {
								granted.incrementAndGet();
							}
							if (buffers.used() > buffers.limit()) {
								over.incrementAndGet();
							}
						}
						buffers.release(exchange);
					}
				}));
			}
			for (Future<?> f : done) {
				f.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			threads.shutdownNow();
		}
		assertThat(over).hasValue(0);
		assertThat(buffers.used()).isZero();
		// Both outcomes happened (one exchange alone may ask for more than the limit).
		assertThat(granted.get()).isPositive();
		assertThat(buffers.rejections()).isPositive();
		assertThat(granted.get() + buffers.rejections()).isEqualTo(8 * 2_000 * 4);
	}

	@Test
	void theLimitMustBePositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> new RequestBuffers(0))
			.withMessageContaining("limitBytes");
	}

}
