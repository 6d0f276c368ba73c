package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.Map;

import io.github.dualmap.prompt.InvalidRequestException;
import org.junit.jupiter.api.Test;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Header, class and default SLOs, and the 400 for a malformed header. */
class SloResolverTests {

	private final SloResolver slos = new SloResolver(Duration.ofSeconds(5), "x-slo-class",
			Map.of("interactive", Duration.ofMillis(800)));

	private static HttpHeaders headers(String... pairs) {
		HttpHeaders h = new HttpHeaders();
		for (int i = 0; i < pairs.length; i += 2) {
			h.add(pairs[i], pairs[i + 1]);
		}
		return h;
	}

	@Test
	void explicitHeaderWinsThenClassThenDefault() {
		assertThat(this.slos.resolveNanos(headers("x-slo-ttft-ms", "1200", "x-slo-class", "interactive")))
			.isEqualTo(Duration.ofMillis(1200).toNanos());
		assertThat(this.slos.resolveNanos(headers("x-slo-class", "interactive")))
			.isEqualTo(Duration.ofMillis(800).toNanos());
		assertThat(this.slos.resolveNanos(headers("x-slo-class", "unknown")))
			.isEqualTo(Duration.ofSeconds(5).toNanos());
		assertThat(this.slos.resolveNanos(headers())).isEqualTo(Duration.ofSeconds(5).toNanos());
	}

	@Test
	void theClassOfAnObjectiveIsABoundedName() {
		assertThat(this.slos.resolve(headers("x-slo-ttft-ms", "1200", "x-slo-class", "interactive")))
			.isEqualTo(new SloResolver.Slo(Duration.ofMillis(1200).toNanos(), "header"));
		assertThat(this.slos.resolve(headers("x-slo-class", " interactive ")))
			.isEqualTo(new SloResolver.Slo(Duration.ofMillis(800).toNanos(), "interactive"));
		// Whatever a client sends, only configured names become a class.
		assertThat(this.slos.resolve(headers("x-slo-class", "made-up-" + System.nanoTime())).sloClass())
			.isEqualTo("default");
		assertThat(this.slos.resolve(headers()).sloClass()).isEqualTo("default");
	}

	@Test
	void aClassMayBoundItsWaitInTheQueues() {
		SloResolver bounded = new SloResolver(Duration.ofSeconds(5), "x-slo-class",
				Map.of("interactive", Duration.ofSeconds(2), "batch", Duration.ofSeconds(60)),
				Map.of("interactive", Duration.ofSeconds(10)));
		assertThat(bounded.resolve(headers("x-slo-class", "interactive"))).isEqualTo(
				new SloResolver.Slo(Duration.ofSeconds(2).toNanos(), "interactive", Duration.ofSeconds(10).toNanos()));
		// Without a bound of its own: the queues' (0).
		assertThat(bounded.resolve(headers("x-slo-class", "batch")).maxWaitNanos()).isZero();
		assertThat(bounded.resolve(headers("x-slo-ttft-ms", "300", "x-slo-class", "interactive")).maxWaitNanos())
			.isZero();
		assertThat(bounded.resolve(headers()).maxWaitNanos()).isZero();
		assertThatThrownBy(() -> new SloResolver(Duration.ofSeconds(5), "x-slo-class", Map.of(),
				Map.of("ghost", Duration.ofSeconds(1))))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("ghost");
	}

	@Test
	void aClassMaySetThePriorityBandOfItsRequests() {
		SloResolver banded = new SloResolver(Duration.ofSeconds(5), "x-slo-class",
				Map.of("interactive", Duration.ofSeconds(2), "batch", Duration.ofSeconds(60)), Map.of(),
				Map.of("interactive", 10));
		assertThat(banded.resolve(headers("x-slo-class", "interactive")).priority()).isEqualTo(10);
		// Without a band of its own, or without a class: the tenant's (null).
		assertThat(banded.resolve(headers("x-slo-class", "batch")).priority()).isNull();
		assertThat(banded.resolve(headers("x-slo-ttft-ms", "300", "x-slo-class", "interactive")).priority()).isNull();
		assertThat(banded.resolve(headers()).priority()).isNull();
		assertThatThrownBy(
				() -> new SloResolver(Duration.ofSeconds(5), "x-slo-class", Map.of(), Map.of(), Map.of("ghost", 3)))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("ghost");
	}

	@Test
	void malformedHeaderIsABadRequestNamingTheHeader() {
		for (String bad : new String[] { "soon", "0", "-5", "1.5", "" }) {
			assertThatThrownBy(() -> this.slos.resolveNanos(headers("x-slo-ttft-ms", bad)))
				.isInstanceOf(InvalidRequestException.class)
				.hasMessageContaining("x-slo-ttft-ms")
				.satisfies(ex -> assertThat(((InvalidRequestException) ex).status()).isEqualTo(400));
		}
	}

	@Test
	void eitherHeaderSentTwiceIsABadRequestWhateverTheOrder() {
		for (String[] twice : new String[][] { { "x-slo-ttft-ms", "100", "x-slo-ttft-ms", "abc" },
				{ "x-slo-ttft-ms", "abc", "x-slo-ttft-ms", "100" },
				{ "x-slo-class", "interactive", "x-slo-class", "batch" },
				{ "x-slo-ttft-ms", "100", "x-slo-ttft-ms", "100" } }) {
			assertThatThrownBy(() -> this.slos.resolveNanos(headers(twice))).isInstanceOf(InvalidRequestException.class)
				.hasMessageContaining("header " + twice[0] + " must be sent once but was sent 2 times");
		}
	}

}
