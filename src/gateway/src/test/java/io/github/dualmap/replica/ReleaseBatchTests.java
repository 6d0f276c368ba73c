package io.github.dualmap.replica;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** The wire format of replica sync: round trip and clear errors for bad batches. */
class ReleaseBatchTests {

	@Test
	void roundTripKeepsEveryReleaseInOrderWithFullSixtyFourBitHashes() {
		ReleaseBatch batch = new ReleaseBatch("r1", "h",
				List.of(new ReleaseBatch.Release("llm", "a", new long[] { Long.MIN_VALUE, -1, 0, Long.MAX_VALUE }),
						new ReleaseBatch.Release("llm", "10.0.0.2:8000", new long[] { 42 })));
		String json = new String(batch.toJson(), StandardCharsets.UTF_8);
		assertThat(json).startsWith("{\"replica\":\"r1\",\"hashing\":\"h\",\"releases\":[{\"service\":\"llm\"");
		ReleaseBatch back = ReleaseBatch.parse(batch.toJson());
		assertThat(back.replica()).isEqualTo("r1");
		assertThat(back.releases()).hasSize(2);
		assertThat(back.releases().get(0).chain()).containsExactly(Long.MIN_VALUE, -1, 0, Long.MAX_VALUE);
		assertThat(back.releases().get(1).instance()).isEqualTo("10.0.0.2:8000");
	}

	@Test
	void aStoredResponseTravelsAsAReleaseWithoutBlocksAndPromptReleasesReadAsBefore() {
		ReleaseBatch batch = new ReleaseBatch("r", "h", List.of(new ReleaseBatch.Release("llm", "a", new long[] { 7 }),
				new ReleaseBatch.Release("llm", "b", new long[0], "resp_1")));
		String json = new String(batch.toJson(), StandardCharsets.UTF_8);
		assertThat(json).contains("{\"service\":\"llm\",\"instance\":\"a\",\"chain\":[7]}")
			.contains("\"response\":\"resp_1\"");
		ReleaseBatch back = ReleaseBatch.parse(batch.toJson());
		assertThat(back.releases().get(0).response()).isNull();
		assertThat(back.releases().get(1).response()).isEqualTo("resp_1");
		assertThat(back.releases().get(1).chain()).isEmpty();
	}

	@Test
	void loadTravelsBesideTheReleasesAndABatchWithoutItReadsAsBefore() {
		ReleaseBatch batch = new ReleaseBatch("r", "h", List.of(),
				List.of(new ReleaseBatch.Load("llm", "a", 3, 5120, 20480), new ReleaseBatch.Load("llm", "b", 0, 0, 7)));
		String json = new String(batch.toJson(), StandardCharsets.UTF_8);
		assertThat(json).contains("\"load\":[{\"service\":\"llm\",\"instance\":\"a\",\"prefillRequests\":3,"
				+ "\"prefillTokens\":5120,\"queuedTokens\":20480}");
		assertThat(ReleaseBatch.parse(batch.toJson()).load()).isEqualTo(batch.load());
		ReleaseBatch without = new ReleaseBatch("r", "h", List.of());
		assertThat(new String(without.toJson(), StandardCharsets.UTF_8)).doesNotContain("load");
		assertThat(ReleaseBatch.parse(without.toJson()).load()).isNull();
		assertThat(ReleaseBatch.parse(new ReleaseBatch("r", "h", List.of(), List.of()).toJson()).load()).isEmpty();
	}

	@Test
	void thePairsInPrefillTravelWhenPublishedAndReadAsAbsentFromSendersThatLeaveThemOut() {
		ReleaseBatch batch = new ReleaseBatch("r", "h", List.of(),
				List.of(new ReleaseBatch.Load("llm", "a", 3, 5120, 20480, 9_000_000L)));
		assertThat(new String(batch.toJson(), StandardCharsets.UTF_8)).contains("\"prefillPairs\":9000000");
		assertThat(ReleaseBatch.parse(batch.toJson()).load()).isEqualTo(batch.load());
		ReleaseBatch older = ReleaseBatch.parse(("{\"replica\":\"r\",\"hashing\":\"h\",\"releases\":[],\"load\":"
				+ "[{\"service\":\"llm\",\"instance\":\"a\",\"prefillRequests\":1,\"prefillTokens\":1,"
				+ "\"queuedTokens\":1}]}")
			.getBytes(StandardCharsets.UTF_8));
		assertThat(older.load()).singleElement().satisfies(l -> assertThat(l.prefillPairs()).isNull());
	}

	@Test
	void badLoadIsRefusedNamingWhatIsWrong() {
		String head = "{\"replica\":\"r\",\"hashing\":\"h\",\"releases\":[],\"load\":";
		bad(head + "[null]}", "load[0] must be an object");
		bad(head + "[{\"instance\":\"a\",\"prefillRequests\":1,\"prefillTokens\":1,\"queuedTokens\":1}]}", "service");
		bad(head + "[{\"service\":\"llm\",\"instance\":\" \",\"prefillRequests\":1,\"prefillTokens\":1,"
				+ "\"queuedTokens\":1}]}", "load[0].instance must be a non-empty string");
		bad(head + "[{\"service\":\"llm\",\"instance\":\"a\",\"prefillRequests\":1,\"prefillTokens\":1}]}",
				"queuedTokens");
		bad(head + "[{\"service\":\"llm\",\"instance\":\"a\",\"prefillRequests\":-1,\"prefillTokens\":1,"
				+ "\"queuedTokens\":1}]}", "must be >= 0");
		bad(head + "[{\"service\":\"llm\",\"instance\":\"a\",\"prefillRequests\":\"1\",\"prefillTokens\":1,"
				+ "\"queuedTokens\":1}]}", "not a release batch");
		bad(head + "[{\"service\":\"llm\",\"instance\":\"a\",\"prefillRequests\":1,\"prefillTokens\":1,"
				+ "\"queuedTokens\":1,\"prefillPairs\":-1}]}", "load[0].prefillPairs must be >= 0");
		bad(head + "[{\"service\":\"llm\",\"instance\":\"a\",\"prefillRequests\":1,\"prefillTokens\":1,"
				+ "\"queuedTokens\":1,\"prefillPairs\":\"x\"}]}", "not a release batch");
		bad(head + "{}}", "not a release batch");
	}

	@Test
	void membersANewerReplicaAddsAreIgnoredSoRollingUpgradesKeepSharing() {
		ReleaseBatch batch = ReleaseBatch.parse(("{\"replica\":\"r\",\"hashing\":\"h\",\"sent_at\":1,"
				+ "\"releases\":[{\"service\":\"llm\",\"instance\":\"a\",\"chain\":[5],\"weight\":{\"x\":[1]}}]}")
			.getBytes(StandardCharsets.UTF_8));
		assertThat(batch.releases()).singleElement().satisfies(r -> {
			assertThat(r.instance()).isEqualTo("a");
			assertThat(r.chain()).containsExactly(5);
		});
	}

	@Test
	void badBatchesAreRefusedNamingWhatIsWrong() {
		bad("", "not a release batch");
		bad("null", "not a release batch");
		bad("{\"replica\":\"r\",\"hashing\":\"h\",\"releases\":[", "not a release batch");
		bad("[1,2]", "not a release batch");
		bad("{\"hashing\":\"h\",\"releases\":[]}", "replica");
		bad("{\"replica\":\" \",\"hashing\":\"h\",\"releases\":[]}", "replica must be a non-empty string");
		bad("{\"replica\":\"" + "x".repeat(300) + "\",\"hashing\":\"h\",\"releases\":[]}", "at most 256");
		bad("{\"replica\":\"r\",\"hashing\":\"h\",\"releases\":null}", "releases must be an array");
		bad("{\"replica\":\"r\",\"hashing\":\"h\",\"releases\":[null]}", "releases[0] must be an object");
		bad(release("\"service\":\"\",\"instance\":\"a\",\"chain\":[1]"), "releases[0].service");
		bad(release("\"service\":\"llm\",\"chain\":[1]"), "instance");
		bad(release("\"service\":\"llm\",\"instance\":\"a\",\"chain\":[]"), "releases[0].chain must be a non-empty");
		bad(release("\"service\":\"llm\",\"instance\":\"a\",\"chain\":[\"x\"]"), "not a release batch");
		bad(release("\"service\":\"llm\",\"instance\":\"a\",\"chain\":[1.5]"), "not a release batch");
		bad(release("\"service\":\"llm\",\"instance\":\"a\",\"chain\":[\"12\"]"), "not a release batch");
		bad(release("\"service\":\"llm\",\"instance\":\"a\",\"chain\":[18446744073709551616]"), "not a release batch");
		bad(release("\"service\":\"llm\",\"instance\":\"a\",\"chain\":[],\"response\":\"\""),
				"releases[0].response must be a non-empty string");
		bad(release("\"service\":\"llm\",\"instance\":\"a\",\"response\":\"resp_1\""),
				"releases[0].chain must be an array");
		bad(release("\"service\":\"llm\",\"instance\":\"a\",\"chain\":[],\"response\":7"), "not a release batch");
	}

	private static String release(String fields) {
		return "{\"replica\":\"r\",\"hashing\":\"h\",\"releases\":[{" + fields + "}]}";
	}

	private static void bad(String json, String message) {
		assertThatIllegalArgumentException().as(json)
			.isThrownBy(() -> ReleaseBatch.parse(json.getBytes(StandardCharsets.UTF_8)))
			.withMessageContaining(message);
	}

	@Test
	void parsingABatchIsCostedAtSixteenBytesAnElementBesidesItsText() {
		byte[] dense = ("{\"replica\":\"r\",\"hashing\":\"h\",\"releases\":[{\"service\":\"s\",\"instance\":\"i\","
				+ "\"chain\":[" + "1,".repeat(999) + "1]}]}")
			.getBytes(StandardCharsets.UTF_8);
		// 999 commas in the chain, two brackets, and the commas between the members.
		assertThat(ReleaseBatch.parseWorkingBytes(dense)).isEqualTo(16L * (999 + 2 + 4) + dense.length);
		// What it parses into is within that: 1,000 longs.
		assertThat(ReleaseBatch.parse(dense).releases().get(0).chain()).hasSize(1000);
	}

}
