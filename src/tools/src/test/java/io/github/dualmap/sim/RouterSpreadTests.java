package io.github.dualmap.sim;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.sim.trace.SyntheticWorkload;
import io.github.dualmap.sim.trace.Trace;
import io.github.dualmap.sim.trace.TraceRequest;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RouterSpreadTests {

	private static final int BLOCK = 512;

	private static TraceRequest prompt(double at, int tokens, long... ids) {
		return new TraceRequest(at, tokens, 1, ids);
	}

	/**
	 * Two conversations that open with one system block (1), one of them branching, and
	 * two prompts that are a shared two-block document (20, 21) with a short question
	 * after it.
	 */
	private static Workload conversations() {
		List<TraceRequest> r = new ArrayList<>();
		// 0: A's first turn, full blocks 1, 2 (3 is partial).
		r.add(prompt(0, 2 * BLOCK + 100, 1, 2, 3));
		// 1: B's first turn opens with the same system block only: a conversation of its
		// own.
		r.add(prompt(10, 2 * BLOCK + 50, 1, 5, 6));
		// 2: A's second turn: A's full blocks, then the rest of the history.
		r.add(prompt(20, 4 * BLOCK + 10, 1, 2, 7, 8, 9));
		// 3, 4: two prompts whose full blocks are the same document: no one's history.
		r.add(prompt(30, 2 * BLOCK + 20, 20, 21, 22));
		r.add(prompt(40, 2 * BLOCK + 30, 20, 21, 23));
		// 5: holds the document's blocks and more: opens a conversation of its own.
		r.add(prompt(50, 3 * BLOCK + 30, 20, 21, 24, 25));
		// 6: A's third turn extends the second (which held the first's blocks).
		r.add(prompt(60, 5 * BLOCK + 10, 1, 2, 7, 8, 10, 11));
		// 7: B's second turn.
		r.add(prompt(70, 3 * BLOCK + 10, 1, 5, 12, 13));
		// 8: a second answer to A's first turn: a branch of A.
		r.add(prompt(80, 3 * BLOCK + 10, 1, 2, 14, 15));
		// 9: one full block: never a turn to follow.
		r.add(prompt(90, BLOCK + 10, 30, 31));
		// 10: holds request 9's one full block and more: a conversation of its own.
		r.add(prompt(100, 3 * BLOCK, 30, 32, 33));
		return Workload.of(new Trace("conversations", BLOCK, r));
	}

	@Test
	void aFollowUpTurnContinuesTheConversationWhoseFullBlocksItHolds() {
		assertThat(conversations().sessions()).containsExactly(0, 1, 0, 3, 4, 5, 0, 1, 0, 9, 10);
	}

	@Test
	void recordedSessionsComeBeforeTheBlocks() {
		// Two chats whose second turns hold nothing of their first (the blocks alone
		// would
		// make four conversations), and a request without a session.
		List<TraceRequest> r = new ArrayList<>();
		r.add(new TraceRequest(0, 2 * BLOCK + 10, 1, new long[] { 1, 2, 3 }, 7));
		r.add(new TraceRequest(10, 2 * BLOCK + 10, 1, new long[] { 4, 5, 6 }, 3));
		r.add(new TraceRequest(20, 2 * BLOCK + 10, 1, new long[] { 8, 9, 10 }, 7));
		r.add(new TraceRequest(30, 2 * BLOCK + 10, 1, new long[] { 11, 12, 13 }));
		r.add(new TraceRequest(40, 2 * BLOCK + 10, 1, new long[] { 14, 15, 16 }, 3));
		Trace t = new Trace("recorded", BLOCK, r);
		assertThat(Workload.of(t).sessions()).containsExactly(0, 1, 0, 3, 1);
		// A repeated trace's copies share no conversation.
		Trace twice = t.repeated(2);
		assertThat(twice.requests()).extracting(TraceRequest::session)
			.containsExactly(7L, 3L, 7L, -1L, 3L, 15L, 11L, 15L, -1L, 11L);
		assertThat(Workload.of(twice).sessions()).containsExactly(0, 1, 0, 3, 1, 5, 6, 5, 8, 6);
		assertThatThrownBy(() -> new TraceRequest(0, 10, 1, new long[] { 1 }, -2))
			.hasMessageContaining("session must be >= 0, or NO_SESSION, but was -2");
	}

	@Test
	void syntheticSessionsRecordTheirConversations() {
		Trace t = SyntheticWorkload.SESSIONS.generate(2_000, 42);
		assertThat(t.requests()).allSatisfy(r -> assertThat(r.session()).isNotNegative());
		// Each turn extends every full block of its session's turn before it.
		Map<Long, TraceRequest> last = new HashMap<>();
		for (TraceRequest r : t.requests()) {
			TraceRequest before = last.put(r.session(), r);
			if (before != null) {
				int full = before.inputTokens() / BLOCK;
				assertThat(java.util.Arrays.copyOf(r.hashIds(), full))
					.containsExactly(java.util.Arrays.copyOf(before.hashIds(), full));
			}
		}
		assertThat(last.size()).isLessThan(1_000);
		assertThat(SyntheticWorkload.TENANTS.generate(200, 42).requests())
			.allSatisfy(r -> assertThat(r.session()).isEqualTo(TraceRequest.NO_SESSION));
	}

	@Test
	void theConversationsAreWorkedOutOnceAndShared() {
		Workload w = conversations();
		assertThat(w.sessions()).isSameAs(w.sessions());
	}

	@Test
	void requestsGoRoundRobinAndSessionsToOneRouterEach() {
		Workload w = conversations();
		assertThat(RouterSpread.REQUESTS.assign(w, 4)).containsExactly(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2);
		int[] bySession = RouterSpread.SESSIONS.assign(w, 4);
		int[] sessions = w.sessions();
		Map<Integer, Integer> routerOfSession = new HashMap<>();
		for (int i = 0; i < bySession.length; i++) {
			assertThat(bySession[i]).isBetween(0, 3);
			Integer seen = routerOfSession.putIfAbsent(sessions[i], bySession[i]);
			assertThat(seen == null || seen == bySession[i]).as("request %d", i).isTrue();
		}
		// One router: every request there, whatever the spread.
		assertThat(RouterSpread.SESSIONS.assign(w, 1)).containsOnly(0);
		assertThatThrownBy(() -> RouterSpread.SESSIONS.assign(w, 0)).hasMessageContaining("routers must be > 0");
	}

	@Test
	void sessionsSpreadEvenlyOverTheRouters() {
		int[] perRouter = new int[4];
		for (int session = 0; session < 40_000; session++) {
			perRouter[RouterSpread.routerOfSession(session, 4)]++;
		}
		assertThat(java.util.Arrays.stream(perRouter).boxed()).allSatisfy(n -> assertThat(n).isBetween(9_600, 10_400));
	}

	@Test
	void theOptionNamesTheSpread() {
		assertThat(RouterSpread.fromCliName("requests")).isEqualTo(RouterSpread.REQUESTS);
		assertThat(RouterSpread.fromCliName("sessions")).isEqualTo(RouterSpread.SESSIONS);
		assertThatThrownBy(() -> RouterSpread.fromCliName("random"))
			.hasMessage("unknown --router-spread 'random' (requests or sessions)");
	}

	@Test
	void eachRequestArrivesAtTheRouterItsSpreadAssigned() {
		// Conversations of three turns, 2 s apart, a new one every 100 ms.
		List<TraceRequest> requests = new ArrayList<>();
		long id = 1;
		for (int c = 0; c < 60; c++) {
			long[] history = { id++, id++ };
			for (int turn = 0; turn < 3; turn++) {
				long[] ids = new long[history.length + 1];
				System.arraycopy(history, 0, ids, 0, history.length);
				ids[history.length] = id++;
				requests.add(prompt(c * 100.0 + turn * 2000.0, history.length * BLOCK + 10, ids));
				long[] longer = new long[ids.length + 1];
				System.arraycopy(ids, 0, longer, 0, ids.length);
				longer[ids.length] = id++;
				history = longer;
			}
		}
		requests.sort((a, b) -> Double.compare(a.timestampMillis(), b.timestampMillis()));
		Workload w = Workload.of(new Trace("chats", BLOCK, requests));
		SimulationConfig config = SimulationConfig.builder()
			.instances(2)
			.routers(3)
			.slo(Duration.ofSeconds(60))
			.networkDelay(Duration.ZERO)
			.warmup(10)
			.seed(1)
			.settings(SchedulerSettings.custom().blockTokens(BLOCK).build())
			.instanceModels((index, seed) -> new FifoInstance(1_000_000L))
			.decisionTimer(() -> 0L)
			.routerSpread(RouterSpread.SESSIONS)
			.requestLog(true)
			.build();
		RequestLog log = Simulation.run(w, PolicySpec.named("dualmap"), config, 10, false).requestLog();
		assertThat(log).isNotNull();
		int[] sessions = w.sessions();
		// Each conversation's three turns are one session.
		assertThat(java.util.Arrays.stream(sessions).distinct().count()).isEqualTo(60);
		int[] assigned = RouterSpread.SESSIONS.assign(w, 3);
		assertThat(log.entries()).isNotEmpty().allSatisfy(e -> assertThat(e.router()).isEqualTo(assigned[e.index()]));
		assertThat(log.entries()).extracting(RequestLog.Entry::router).contains(0, 1, 2);
		RequestLog roundRobin = Simulation
			.run(w, PolicySpec.named("dualmap"), config.toBuilder().routerSpread(RouterSpread.REQUESTS).build(), 10,
					false)
			.requestLog();
		assertThat(roundRobin).isNotNull();
		assertThat(roundRobin.entries()).allSatisfy(e -> assertThat(e.router()).isEqualTo(e.index() % 3));
	}

}
