package io.github.dualmap.gateway;

import org.junit.jupiter.api.Test;

import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RequestBuffersTests {

	static MockServerWebExchange exchange() {
		return MockServerWebExchange.from(MockServerHttpRequest.post("/v1/chat/completions"));
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
	void theLimitMustBePositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> new RequestBuffers(0))
			.withMessageContaining("limitBytes");
	}

}
