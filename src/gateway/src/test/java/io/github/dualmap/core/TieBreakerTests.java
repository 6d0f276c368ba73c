package io.github.dualmap.core;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class TieBreakerTests {

	private static RoutingRequest request(int i) {
		return new RoutingRequest("r" + i, null, 5_000_000_000L, 0);
	}

	@Test
	void turnsRotateAndTheRequestHashSpreadsReplicasApart() {
		List<String> items = List.of("a", "b", "c", "d");
		TieBreaker turns = new TieBreaker();
		assertThat(List.of(turns.lowest(items, s -> 1), turns.lowest(items, s -> 1), turns.lowest(items, s -> 1)))
			.containsExactly("a", "b", "c");
		// Four replicas taking arrivals in turn: with turns every replica's first pick is
		// "a"; with the request hash the picks spread, and one request always gets the
		// same pick.
		TieBreaker[] replicas = { new TieBreaker(), new TieBreaker(), new TieBreaker(), new TieBreaker() };
		Map<String, Integer> picks = new HashMap<>();
		for (int i = 0; i < 4_000; i++) {
			String pick = replicas[i % 4].lowest(items, s -> 1, request(i));
			assertThat(new TieBreaker().lowest(items, s -> 1, request(i))).isEqualTo(pick);
			picks.merge(pick, 1, Integer::sum);
		}
		assertThat(picks.values()).allSatisfy(n -> assertThat(n).isBetween(850, 1150));
		// The lowest cost still wins outright.
		assertThat(replicas[0].lowest(items, s -> s.equals("c") ? 0 : 1, request(1))).isEqualTo("c");
	}

}
