package io.github.dualmap.sim;

/**
 * Something that happens at one instant of a simulation's virtual time. The run's
 * {@link EventQueue} orders events; each one names the {@link Handler} method that acts
 * on it, so a kind of event and its payload are one type.
 */
sealed interface SimEvent {

	/** Calls the method of {@code handler} that acts on this kind of event. */
	void handle(Handler handler);

	/** Acts on each kind of event of a run. */
	interface Handler {

		void arrival(int request);

		void delivery(int request);

		void stepEnd(int engine, InstanceModel.StepOutcome outcome);

		void firstTokenSeen(int request);

		void finishSeen(int request);

		void scrape();

		void routerScrape(int router);

		void queueTick(int router);

		void membershipChange(int step);

		void releaseShared(int request, String instanceId);

		void loadFlush(int from, int to);

		void loadSeen(int from, int to, long[][] load);

		void kvEventsSeen(int engine, KvStepEvents.Batch batch);

		void meshInsertSeen(int request, String instanceId);

	}

	/** A request of the workload reaches its router. */
	record Arrival(int request) implements SimEvent {

		@Override
		public void handle(Handler handler) {
			handler.arrival(this.request);
		}

	}

	/** A request sent to an engine arrives there, one network delay after its release. */
	record Delivery(int request) implements SimEvent {

		@Override
		public void handle(Handler handler) {
			handler.delivery(this.request);
		}

	}

	/** An engine's step ends with {@code outcome}. */
	record StepEnd(int engine, InstanceModel.StepOutcome outcome) implements SimEvent {

		@Override
		public void handle(Handler handler) {
			handler.stepEnd(this.engine, this.outcome);
		}

	}

	/** A request's first token reaches its router. */
	record FirstTokenSeen(int request) implements SimEvent {

		@Override
		public void handle(Handler handler) {
			handler.firstTokenSeen(this.request);
		}

	}

	/** A request's end reaches its router. */
	record FinishSeen(int request) implements SimEvent {

		@Override
		public void handle(Handler handler) {
			handler.finishSeen(this.request);
		}

	}

	/** The routers scrape every engine's metrics. */
	record Scrape() implements SimEvent {

		@Override
		public void handle(Handler handler) {
			handler.scrape();
		}

	}

	/**
	 * Router {@code router} scrapes every engine's metrics on its own phase
	 * ({@link RouterPhases#STAGGERED}).
	 */
	record RouterScrape(int router) implements SimEvent {

		@Override
		public void handle(Handler handler) {
			handler.routerScrape(this.router);
		}

	}

	/** A router's dispatch queues reach their next deadline. */
	record QueueTick(int router) implements SimEvent {

		@Override
		public void handle(Handler handler) {
			handler.queueTick(this.router);
		}

	}

	/** Step {@code step} of the membership schedule: instances join or leave. */
	record MembershipChange(int step) implements SimEvent {

		@Override
		public void handle(Handler handler) {
			handler.membershipChange(this.step);
		}

	}

	/**
	 * With replica sync, a request's release to {@code instanceId} reaches the other
	 * routers.
	 */
	record ReleaseShared(int request, String instanceId) implements SimEvent {

		@Override
		public void handle(Handler handler) {
			handler.releaseShared(this.request, this.instanceId);
		}

	}

	/**
	 * With replica sync and load sharing, routers {@code [from, to)} publish their load:
	 * every router at once ({@link RouterPhases#ALIGNED}), or one.
	 */
	record LoadFlush(int from, int to) implements SimEvent {

		@Override
		public void handle(Handler handler) {
			handler.loadFlush(this.from, this.to);
		}

	}

	/**
	 * The load publication of routers {@code [from, to)} reaches the other routers: per
	 * router, three numbers per engine slot (see {@link PeerUpdates#flushLoad}), those
	 * outside {@code [from, to)} empty.
	 */
	record LoadSeen(int from, int to, long[][] load) implements SimEvent {

		@Override
		public void handle(Handler handler) {
			handler.loadSeen(this.from, this.to, this.load);
		}

	}

	/** An engine step's KV events reach the routers' KV event index. */
	record KvEventsSeen(int engine, KvStepEvents.Batch batch) implements SimEvent {

		@Override
		public void handle(Handler handler) {
			handler.kvEventsSeen(this.engine, this.batch);
		}

	}

	/** A router's tree insert reaches the other replicas over the SGLang mesh. */
	record MeshInsertSeen(int request, String instanceId) implements SimEvent {

		@Override
		public void handle(Handler handler) {
			handler.meshInsertSeen(this.request, this.instanceId);
		}

	}

}
