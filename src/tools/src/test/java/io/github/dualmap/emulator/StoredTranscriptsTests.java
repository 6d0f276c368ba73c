package io.github.dualmap.emulator;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class StoredTranscriptsTests {

	@Test
	void onceFullTheLeastRecentlyUsedGoFirstAndTheNewestStay() {
		// Transcripts of 40 characters in a store of 40,000: room for 1,000. Each is
		// written once and continued once, as a Responses API chain is.
		StoredTranscripts<String> store = new StoredTranscripts<>(40_000, String::length);
		for (int i = 0; i < 5000; i++) {
			store.put("resp_" + i, "x".repeat(40));
			assertThat(store.get("resp_" + i)).isNotNull();
		}
		assertThat(store.size()).isEqualTo(1000);
		for (int i = 4000; i < 5000; i++) {
			assertThat(store.get("resp_" + i)).as("resp_" + i).isNotNull();
		}
		assertThat(store.get("resp_3999")).isNull();
		// A read makes an entry the most recent: the next one written evicts another.
		store.get("resp_4000");
		store.put("resp_5000", "x".repeat(40));
		assertThat(store.get("resp_4000")).isNotNull();
		assertThat(store.get("resp_4001")).isNull();
	}

	@Test
	void aValueHeavierThanTheBoundIsNotKeptAndARemovalFreesItsWeight() {
		StoredTranscripts<String> store = new StoredTranscripts<>(100, String::length);
		store.put("big", "x".repeat(101));
		assertThat(store.get("big")).isNull();
		store.put("a", "x".repeat(60));
		assertThat(store.remove("a")).isNotNull();
		store.put("b", "x".repeat(60));
		store.put("c", "x".repeat(40));
		assertThat(store.get("b")).isNotNull();
		assertThat(store.get("c")).isNotNull();
	}

}
