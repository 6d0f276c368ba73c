package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class EventQueueTests {

	@Test
	void eventsComeOutByTimeAndTiesInTheOrderTheyWereScheduled() {
		EventQueue events = new EventQueue();
		events.schedule(20, new SimEvent.Arrival(1));
		events.schedule(10, new SimEvent.Delivery(2));
		events.schedule(20, new SimEvent.Scrape());
		events.schedule(10, new SimEvent.QueueTick(3));
		List<SimEvent> taken = new ArrayList<>();
		List<Long> times = new ArrayList<>();
		while (!events.isEmpty()) {
			taken.add(events.next());
			times.add(events.now());
		}
		assertThat(taken).containsExactly(new SimEvent.Delivery(2), new SimEvent.QueueTick(3), new SimEvent.Arrival(1),
				new SimEvent.Scrape());
		assertThat(times).containsExactly(10L, 10L, 20L, 20L);
	}

	@Test
	void eachEventCallsTheHandlerMethodOfItsKind() {
		List<String> calls = new ArrayList<>();
		SimEvent.Handler handler = new SimEvent.Handler() {

			@Override
			public void arrival(int request) {
				calls.add("arrival " + request);
			}

			@Override
			public void delivery(int request) {
				calls.add("delivery " + request);
			}

			@Override
			public void stepEnd(int engine, InstanceModel.StepOutcome outcome) {
				calls.add("stepEnd " + engine);
			}

			@Override
			public void firstTokenSeen(int request) {
				calls.add("firstTokenSeen " + request);
			}

			@Override
			public void finishSeen(int request) {
				calls.add("finishSeen " + request);
			}

			@Override
			public void scrape() {
				calls.add("scrape");
			}

			@Override
			public void routerScrape(int router) {
				calls.add("routerScrape " + router);
			}

			@Override
			public void queueTick(int router) {
				calls.add("queueTick " + router);
			}

			@Override
			public void membershipChange(int step) {
				calls.add("membershipChange " + step);
			}

			@Override
			public void releaseShared(int request, String instanceId) {
				calls.add("releaseShared " + request + " " + instanceId);
			}

			@Override
			public void loadFlush(int from, int to) {
				calls.add("loadFlush " + from + " " + to);
			}

			@Override
			public void loadSeen(int from, int to, long[][] load) {
				calls.add("loadSeen " + from + " " + to + " " + load.length);
			}

			@Override
			public void kvEventsSeen(int engine, KvStepEvents.Batch batch) {
				calls.add("kvEventsSeen " + engine + " " + batch.hashes().length);
			}

			@Override
			public void meshInsertSeen(int request, String instanceId) {
				calls.add("meshInsertSeen " + request + " " + instanceId);
			}

		};
		List<SimEvent> all = List.of(new SimEvent.Arrival(1), new SimEvent.Delivery(2),
				new SimEvent.StepEnd(3, new InstanceModel.StepOutcome(0, new int[0], new int[0], new int[0])),
				new SimEvent.FirstTokenSeen(4), new SimEvent.FinishSeen(5), new SimEvent.Scrape(),
				new SimEvent.RouterScrape(3), new SimEvent.QueueTick(6), new SimEvent.MembershipChange(7),
				new SimEvent.ReleaseShared(8, "e"), new SimEvent.LoadFlush(0, 2),
				new SimEvent.LoadSeen(1, 2, new long[2][0]),
				new SimEvent.KvEventsSeen(9, new KvStepEvents.Batch(new long[3], new boolean[3])),
				new SimEvent.MeshInsertSeen(10, "f"));
		all.forEach(e -> e.handle(handler));
		assertThat(calls).containsExactly("arrival 1", "delivery 2", "stepEnd 3", "firstTokenSeen 4", "finishSeen 5",
				"scrape", "routerScrape 3", "queueTick 6", "membershipChange 7", "releaseShared 8 e", "loadFlush 0 2",
				"loadSeen 1 2 2", "kvEventsSeen 9 3", "meshInsertSeen 10 f");
	}

}
