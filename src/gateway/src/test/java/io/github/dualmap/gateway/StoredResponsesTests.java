package io.github.dualmap.gateway;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import io.github.dualmap.actuate.StoredResponsesMeters;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class StoredResponsesTests {

	private final AtomicLong nanos = new AtomicLong();

	@Test
	void remembersPerServiceWhoAnsweredUntilTheTtl() {
		StoredResponses stored = new StoredResponses(100, Duration.ofMinutes(10), this.nanos::get);
		stored.record("llm", "resp_1", "a");
		stored.record("other", "resp_1", "b");
		assertThat(stored.instanceOf("llm", "resp_1")).isEqualTo("a");
		assertThat(stored.instanceOf("other", "resp_1")).isEqualTo("b");
		assertThat(stored.instanceOf("llm", "resp_2")).isNull();
		this.nanos.addAndGet(Duration.ofMinutes(11).toNanos());
		assertThat(stored.instanceOf("llm", "resp_1")).isNull();
	}

	@Test
	void keepsAtMostMaxEntriesAndNoOverlongIds() {
		StoredResponses stored = new StoredResponses(10, Duration.ofHours(1), this.nanos::get);
		for (int i = 0; i < 1000; i++) {
			stored.record("llm", "resp_" + i, "a");
		}
		assertThat(stored.size()).isLessThanOrEqualTo(10);
		stored.record("llm", "x".repeat(StoredResponses.MAX_ID_LENGTH + 1), "a");
		assertThat(stored.instanceOf("llm", "x".repeat(StoredResponses.MAX_ID_LENGTH + 1))).isNull();
	}

	@Test
	void theGaugeCountsWhatIsRemembered() {
		StoredResponses stored = new StoredResponses(100, Duration.ofHours(1), this.nanos::get);
		SimpleMeterRegistry meters = new SimpleMeterRegistry();
		new StoredResponsesMeters(stored).bindTo(meters);
		stored.record("llm", "resp_1", "a");
		stored.record("llm", "resp_2", "b");
		assertThat(meters.get("dualmap.stored.responses").gauge().value()).isEqualTo(2);
	}

	@Test
	void boundsMustBePositive() {
		assertThatIllegalArgumentException().isThrownBy(() -> new StoredResponses(0, Duration.ofHours(1)))
			.withMessageContaining("maxEntries");
		assertThatIllegalArgumentException().isThrownBy(() -> new StoredResponses(1, Duration.ZERO))
			.withMessageContaining("ttl");
	}

	@Test
	void onceFullTheNewestResponsesAreKeptNotTheOldest() {
		// Each response is written once and continued once, as chats are: a bound of
		// 1,000 must keep the last 1,000, the ones clients are still continuing.
		StoredResponses stored = new StoredResponses(1000, Duration.ofHours(1));
		for (int i = 0; i < 5000; i++) {
			stored.record("llm", "resp_" + i, "i" + (i % 4));
			assertThat(stored.instanceOf("llm", "resp_" + i)).isNotNull();
		}
		int kept = 0;
		for (int i = 4000; i < 5000; i++) {
			kept += stored.instanceOf("llm", "resp_" + i) != null ? 1 : 0;
		}
		assertThat(kept).isEqualTo(1000);
	}

}
