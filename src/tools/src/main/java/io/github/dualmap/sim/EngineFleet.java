package io.github.dualmap.sim;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.github.dualmap.core.KvEventFeed;
import io.github.dualmap.core.KvEventIndex;
import io.github.dualmap.core.RingMember;
import org.jspecify.annotations.Nullable;

/**
 * A run's engine instances, one slot each: their models, which are members of the pool,
 * which are running a step, and the KV events they publish. Slots beyond the initial
 * instances are for instances a membership schedule adds; a removed instance keeps its
 * slot and steps through the requests it holds.
 */
final class EngineFleet {

	/**
	 * Delay of an engine step's KV events past the step's end, on top of the network
	 * delay: vLLM publishes them after the step over ZMQ and the router's indexer applies
	 * them asynchronously.
	 */
	static final long KV_EVENT_LAG_NANOS = 10_000_000L;

	private final SimulationConfig config;

	private final Workload workload;

	private final EventQueue events;

	private final long delayNanos;

	private final String[] instanceIds;

	private final Map<String, Integer> instanceIndex = new HashMap<>();

	private final InstanceModel[] engines;

	private final boolean[] stepping;

	private final boolean[] member;

	// Engines created so far.
	private int joined;

	// With a policy that routes on KV events: the index every router reads, and each
	// engine's events of the step being run. Null otherwise.
	private @Nullable KvEventIndex kvIndex;

	private @Nullable KvStepEvents @Nullable [] stepEvents;

	EngineFleet(SimulationConfig config, Workload workload, EventQueue events, int slots) {
		this.config = config;
		this.workload = workload;
		this.events = events;
		this.delayNanos = config.networkDelay().toNanos();
		this.instanceIds = new String[slots];
		this.engines = new InstanceModel[slots];
		this.stepping = new boolean[slots];
		this.member = new boolean[slots];
	}

	/** Slots, joined or not. */
	int slots() {
		return this.engines.length;
	}

	/** Engines created so far; slots from here on are not joined yet. */
	int joined() {
		return this.joined;
	}

	String id(int k) {
		return this.instanceIds[k];
	}

	/** The slot of instance {@code instanceId}, {@code null} for an unknown one. */
	@Nullable Integer slotOf(String instanceId) {
		return this.instanceIndex.get(instanceId);
	}

	InstanceModel engine(int k) {
		return this.engines[k];
	}

	boolean isMember(int k) {
		return this.member[k];
	}

	/** The ids of the joined slots, in slot order. */
	String[] joinedIds() {
		return Arrays.copyOf(this.instanceIds, this.joined);
	}

	/** The ids of every slot (null for one not joined yet). */
	String[] slotIds() {
		return this.instanceIds.clone();
	}

	/** Creates the engine of the next slot and marks it a member. */
	void join() {
		int k = this.joined++;
		this.instanceIds[k] = String.format("engine-%03d", k);
		this.instanceIndex.put(this.instanceIds[k], k);
		this.engines[k] = this.config.instanceModels().create(k, this.config.seed() * 1_000_003L + k);
		this.member[k] = true;
		listen(k);
	}

	/** Removes {@code count} members from the pool, the newest first. */
	void leave(int count) {
		for (int d = 0, k = this.joined - 1; d < count && k >= 0; k--) {
			if (this.member[k]) {
				this.member[k] = false;
				d++;
			}
		}
	}

	/** The current members, as the routers' rings take them. */
	List<RingMember> members() {
		List<RingMember> members = new ArrayList<>();
		for (int k = 0; k < this.joined; k++) {
			if (this.member[k]) {
				members.add(new RingMember(this.instanceIds[k], this.engines[k].ringWeight()));
			}
		}
		return members;
	}

	/**
	 * Hands request {@code i} to engine {@code k} and starts a step if the engine is
	 * idle.
	 * @return whether the engine took it (false: it can never fit)
	 */
	boolean submit(int k, int i) {
		if (!this.engines[k].submit(i, this.workload.trace().requests().get(i), this.events.now())) {
			return false;
		}
		if (!this.stepping[k]) {
			startStep(k);
		}
		return true;
	}

	/**
	 * Runs engine {@code k}'s next step: its end, and the KV events it publishes, are
	 * scheduled.
	 */
	void startStep(int k) {
		InstanceModel.StepOutcome outcome = this.engines[k].step(this.events.now());
		this.stepping[k] = true;
		this.events.schedule(outcome.endNanos(), new SimEvent.StepEnd(k, outcome));
		KvStepEvents stepped = this.stepEvents == null ? null : this.stepEvents[k];
		if (stepped != null && stepped.size() > 0) {
			this.events.schedule(outcome.endNanos() + this.delayNanos + KV_EVENT_LAG_NANOS,
					new SimEvent.KvEventsSeen(k, stepped.drain()));
		}
	}

	/** Engine {@code k}'s step has ended. */
	void stepEnded(int k) {
		this.stepping[k] = false;
	}

	/** Starts engine {@code k}'s next step if it has work. */
	void continueStepping(int k) {
		if (this.engines[k].hasWork()) {
			startStep(k);
		}
	}

	/**
	 * The KV event feed of this run, created on first use: one index for every router
	 * (each replica subscribes to the same events), fed by every engine from now on.
	 */
	KvEventFeed kvEventFeed(String policyName) {
		InstanceModel.KvEventSource source = this.engines[0].kvEventSource();
		if (source == null) {
			throw new IllegalArgumentException(
					"policy '" + policyName + "' routes on engine KV events, which this instance model has none of");
		}
		if (this.kvIndex == null) {
			this.kvIndex = new KvEventIndex();
			this.stepEvents = new KvStepEvents[this.engines.length];
			for (int k = 0; k < this.joined; k++) {
				listen(k);
			}
		}
		Map<String, long[]> recent = new HashMap<>();
		KvEventFeed.EngineBlocks blocks = request -> {
			if (request.blocks() == null) {
				return null;
			}
			// One entry: choose() and onDispatched() of the same request ask in turn.
			long[] chain = recent.get(request.id());
			if (chain == null) {
				int i = Integer.parseInt(request.id().substring(1));
				chain = source.blockHashes(this.workload.trace().requests().get(i));
				recent.clear();
				recent.put(request.id(), chain);
			}
			return chain;
		};
		return new KvEventFeed(this.kvIndex, blocks, source.blockTokens(), source.maxBatchedTokens());
	}

	/** Collects engine {@code k}'s KV events of each step. */
	private void listen(int k) {
		InstanceModel.KvEventSource source = this.engines[k].kvEventSource();
		KvStepEvents[] all = this.stepEvents;
		if (all == null || source == null) {
			return;
		}
		KvStepEvents stepped = new KvStepEvents();
		all[k] = stepped;
		source.listen(stepped);
	}

	/** Engine {@code k}'s KV events of one step reach the routers' index. */
	void kvEventsSeen(int k, KvStepEvents.Batch batch) {
		KvEventIndex index = this.kvIndex;
		if (index == null) {
			return;
		}
		for (int j = 0; j < batch.hashes().length; j++) {
			if (batch.stored()[j]) {
				index.stored(this.instanceIds[k], batch.hashes()[j]);
			}
			else {
				index.removed(this.instanceIds[k], batch.hashes()[j]);
			}
		}
	}

}
