package io.github.dualmap.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The queue rules wired as {@link DispatchQueues} wires them, without the coordinator, so
 * a rule's test calls that rule alone on queues it set up by hand: a pool on a
 * {@link ManualClock} with 1 ms per uncached token ({@link QueueFixture}), requests
 * queued directly on an instance, and prefill put in flight on an instance without a
 * queue.
 */
final class QueueRulesFixture {

	final ManualClock clock = new ManualClock();

	final InstancePool pool;

	final QueueSettings settings;

	final QueueBook book;

	final Relocator relocator;

	final ReleasePass releasePass;

	final Rescue rescue;

	final MoveGain moveGain;

	final IdlePull idlePull;

	final Rebalancer rebalancer;

	final Outcomes outcomes = new Outcomes();

	// What the rules handed to run outside the lock.
	final List<Runnable> out = new ArrayList<>();

	private final PinnedPolicy policy = PinnedPolicy.to("a");

	private long sequence;

	QueueRulesFixture(QueueSettings settings, String... ids) {
		this(settings, FairnessSettings.ofDefaults(), ids);
	}

	QueueRulesFixture(QueueSettings settings, FairnessSettings fairness, String... ids) {
		this.pool = QueueFixture.pool(QueueFixture.millisecondPerToken().build(), clock, ids);
		this.settings = settings;
		this.book = new QueueBook(pool, settings, fairness);
		this.relocator = new Relocator(book);
		this.releasePass = new ReleasePass(book, policy, q -> {
		}, at -> {
		});
		this.rescue = new Rescue(book, releasePass);
		releasePass.rescueHopelessWith(rescue);
		this.moveGain = new MoveGain(pool);
		this.idlePull = new IdlePull(book, relocator, releasePass, moveGain);
		this.rebalancer = new Rebalancer(book, relocator, releasePass, moveGain);
	}

	InstanceState instance(String id) {
		InstanceState s = pool.instance(id);
		if (s == null) {
			throw new IllegalArgumentException("no instance " + id);
		}
		return s;
	}

	/**
	 * A request of {@code r}, placed now on {@code instanceId} with its cached prefix
	 * there, not yet queued.
	 */
	RequestTicket placed(RoutingRequest r, String instanceId) {
		InstanceState s = instance(instanceId);
		PromptBlocks blocks = r.blocks();
		int cached = blocks.tokensFor(s.shadow().peekMatchedBlocks(blocks.chain()));
		long now = pool.now();
		return new RequestTicket(r, true, blocks.keyAt(0), sequence++, now, now + settings.agingNanos(),
				now + settings.maxWaitNanos(),
				new Decision(instanceId, Reason.AFFINITY, cached, r.promptTokens() - cached, -1), outcomes);
	}

	/** {@code r} placed on {@code instanceId} and queued there. */
	RequestTicket queued(RoutingRequest r, String instanceId) {
		RequestTicket q = placed(r, instanceId);
		book.enqueue(q, instance(instanceId));
		return q;
	}

	/**
	 * A request of {@code uncached} tokens sent to {@code instanceId}, in prefill there.
	 */
	InstancePool.InFlight inPrefill(String instanceId, int uncached) {
		RoutingRequest r = QueueFixture.request("busy-" + sequence++, 1_000 + sequence, uncached);
		return pool.dispatch(r, new Decision(instanceId, Reason.LOAD, 0, uncached, -1));
	}

	/** The other candidate of {@code q}'s key than {@code instanceId}. */
	String otherCandidate(RequestTicket q, String instanceId) {
		Candidates c = QueueBook.candidatesOf(q, pool.rings());
		return c.first().equals(instanceId) ? c.second() : c.first();
	}

	/** The first candidate of the routing key of {@code r}. */
	String firstCandidate(RoutingRequest r) {
		return pool.rings().candidates(r.blocks().keyAt(0)).first();
	}

	void advance(Duration d) {
		clock.advance(d);
	}

	/** Runs what the rules handed over (listener calls), as the coordinator does. */
	void runOut() {
		for (Runnable r : out) {
			r.run();
		}
		out.clear();
	}

}
