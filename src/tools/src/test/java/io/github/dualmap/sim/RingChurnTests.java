package io.github.dualmap.sim;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class RingChurnTests {

	private static final int KEYS = 200_000;

	@Test
	void addingOneOfEightMovesAboutOneNinthPerRing() {
		RingChurn.Change c = RingChurn.ofDefaults().add(8, KEYS, 7);
		assertThat(c.from()).isEqualTo(8);
		assertThat(c.to()).isEqualTo(9);
		// The new instance takes about 1/9 of each ring (160 virtual nodes: +-25 %).
		assertThat(c.firstChanged()).isCloseTo(1.0 / 9, within(0.03));
		// The pair changes when either ring's lookup lands on the newcomer: about 2/9.
		assertThat(c.pairChanged()).isCloseTo(2.0 / 9, within(0.05));
		// Both raw homes move together with probability about 1/81 ...
		assertThat(c.bothHomesMoved()).isCloseTo(1.0 / 81, within(0.006));
		// ... yet one newcomer can take only one place in a pair of distinct instances.
		assertThat(c.bothLost()).isZero();
		// Hash-mod-N rehomes everything but the keys whose residue does not change.
		assertThat(c.modNMoved()).isCloseTo(8.0 / 9, within(0.01));
	}

	@Test
	void removingOneOfEightMovesItsShareAndNeverBothCandidates() {
		RingChurn.Change c = RingChurn.ofDefaults().remove(8, KEYS, 8, 7);
		assertThat(c.to()).isEqualTo(7);
		assertThat(c.keys()).isEqualTo(8L * KEYS);
		// Averaged over every removed instance, exactly its ring share moves: 1/8.
		assertThat(c.firstChanged()).isCloseTo(1.0 / 8, within(0.005));
		assertThat(c.pairChanged()).isCloseTo(2.0 / 8, within(0.01));
		assertThat(c.bothHomesMoved()).isCloseTo(1.0 / 64, within(0.004));
		assertThat(c.bothLost()).isZero();
		assertThat(c.modNMoved()).isCloseTo(7.0 / 8, within(0.02));
	}

	@Test
	void churnShrinksWithThePool() {
		RingChurn churn = RingChurn.ofDefaults();
		RingChurn.Change small = churn.add(8, KEYS, 3);
		RingChurn.Change large = churn.add(64, KEYS, 3);
		assertThat(large.pairChanged()).isLessThan(small.pairChanged() / 4);
		assertThat(large.modNMoved()).isGreaterThan(small.modNMoved());
	}

	@Test
	void sameSeedSameNumbers() {
		assertThat(RingChurn.ofDefaults().remove(16, 20_000, 3, 11))
			.isEqualTo(RingChurn.ofDefaults().remove(16, 20_000, 3, 11));
	}

	@Test
	void badArgumentsNameTheValue() {
		RingChurn churn = RingChurn.ofDefaults();
		assertThatThrownBy(() -> churn.remove(1, 10, 1, 1)).hasMessageContaining("was 1");
		assertThatThrownBy(() -> churn.remove(8, 10, 9, 1)).hasMessageContaining("removals must be in 1..8 but was 9");
		assertThatThrownBy(() -> churn.add(8, 0, 1)).hasMessageContaining("keys must be > 0 but was 0");
		assertThatThrownBy(() -> new RingChurn(0)).hasMessageContaining("was 0");
	}

	@Test
	void commandPrintsTableAndWritesJson(@TempDir Path dir) throws Exception {
		StringWriter out = new StringWriter();
		StringWriter err = new StringWriter();
		int code = new ChurnCommand().redirect(new PrintWriter(out), new PrintWriter(err))
			.runWith("--instances", "8,16", "--keys", "20000", "--removals", "4", "--out", dir.toString());
		assertThat(code).as(err.toString()).isZero();
		assertThat(out.toString()).contains("| 8 → 9 |", "| 8 → 7 |", "| 16 → 17 |", "| 16 → 15 |",
				"hash-mod-N: home moved");
		JsonNode json = JsonMapper.builder().build().readTree(Files.readString(dir.resolve("churn.json")));
		assertThat(json.get("virtual_nodes").asInt()).isEqualTo(160);
		assertThat(json.get("changes")).hasSize(4);
		JsonNode first = json.get("changes").get(0);
		assertThat(first.get("kind").asString()).isEqualTo("add");
		assertThat(first.get("keys").asLong()).isEqualTo(20000);
		assertThat(first.get("pair_changed").asDouble()).isBetween(0.1, 0.35);
		assertThat(json.get("changes").get(1).get("keys").asLong()).isEqualTo(80000);
	}

	@Test
	void commandRejectsBadInputWithExitCodeTwo() {
		StringWriter err = new StringWriter();
		int code = new ChurnCommand().redirect(new PrintWriter(new StringWriter()), new PrintWriter(err))
			.runWith("--instances", "8,1");
		assertThat(code).isEqualTo(2);
		assertThat(err.toString()).contains("--instances must all be >= 2 but one was 1");
		StringWriter err2 = new StringWriter();
		assertThat(new ChurnCommand().redirect(new PrintWriter(new StringWriter()), new PrintWriter(err2))
			.runWith("--keys", "x")).isEqualTo(2);
		assertThat(err2.toString()).contains("'x'");
	}

	@Test
	void virtualNodesAboveTheBoundAreRefusedNotScaledDown() {
		StringWriter err = new StringWriter();
		assertThat(new ChurnCommand().redirect(new PrintWriter(new StringWriter()), new PrintWriter(err))
			.runWith("--instances", "8", "--keys", "10", "--virtual-nodes", "100000000")).isEqualTo(2);
		assertThat(err.toString().strip())
			.isEqualTo("churn: --virtual-nodes must be between 1 and 10000 (per unit of weight) but was 100000000");
	}

}
