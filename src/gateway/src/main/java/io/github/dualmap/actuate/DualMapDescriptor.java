package io.github.dualmap.actuate;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.core.TenantShare;
import io.github.dualmap.gateway.ServicePool;
import io.github.dualmap.replica.ReplicaPublisher;
import io.github.dualmap.gateway.RequestBuffers;
import io.github.dualmap.replica.ReplicaSync;
import io.github.dualmap.tenant.FairnessAccounts;
import io.github.dualmap.tenant.TenantView;
import io.github.dualmap.tenant.TokenBudgets;
import org.jspecify.annotations.Nullable;

/**
 * The JSON body of {@code GET /actuator/dualmap}: the routing policy, the dispatch mode,
 * the scheduler and queue settings, one {@link Pool} per routed service and every
 * warning. Durations are in milliseconds, hashes are 16-digit hex strings, unknown values
 * are {@code null}.
 *
 * @param policy the configured {@code dualmap.policy} (a pool may run another, see
 * {@link Pool#policy()})
 * @param dispatchMode the configured {@code dualmap.dispatch.mode} ({@code queue} or
 * {@code pass-through}; a pool may override it)
 * @param settings the global scheduler settings (a pool may have its own default TTFT
 * SLO, {@link Pool#sloTtftMs()})
 * @param dispatch the global dispatch queue settings (a pool's own are
 * {@link Pool#dispatch()})
 * @param pools the routed services by service id
 * @param warnings every pool's warnings, each naming its service
 * @param replicas replica sync, or {@code null} when it is off
 * @param buffers the request bodies held in memory against their budget, or {@code null}
 * without one
 * @param tenants the tenants and their token budgets, or {@code null} when
 * {@code dualmap.tenants.enabled} is off
 */
public record DualMapDescriptor(String policy, String dispatchMode, Settings settings, Dispatch dispatch,
		Map<String, Pool> pools, List<String> warnings, @Nullable Replicas replicas, @Nullable Buffers buffers,
		@Nullable Tenants tenants) {

	public DualMapDescriptor(String policy, String dispatchMode, Settings settings, Dispatch dispatch,
			Map<String, Pool> pools, List<String> warnings, @Nullable Replicas replicas, @Nullable Buffers buffers) {
		this(policy, dispatchMode, settings, dispatch, pools, warnings, replicas, buffers, null);
	}

	/**
	 * Tenants ({@code dualmap.tenants.*}).
	 *
	 * @param mode {@code enforce} or {@code shadow}
	 * @param store {@code local} or {@code redis}
	 * @param tenants each configured tenant, {@code default}, and {@code other} (every
	 * unlisted tenant together, once one was seen): settings, budgets as this replica
	 * last saw them, usage since it started
	 * @param fairness each pool's fairness account by service id: whether it is shared
	 * with the other replicas through Redis (then the shares count the whole pool's
	 * service) and how its sync goes
	 */
	public record Tenants(String mode, String store, Map<String, TenantView> tenants,
			Map<String, FairnessAccounts.Status> fairness) {

		public Tenants(String mode, String store, Map<String, TenantView> tenants) {
			this(mode, store, tenants, Map.of());
		}

		static Tenants of(TokenBudgets budgets) {
			return new Tenants(budgets.mode().name().toLowerCase(Locale.ROOT), budgets.storeKind(), budgets.view());
		}

		/**
		 * With each tenant's share of every pool's recent service beside its budgets
		 * (unlisted tenants together under {@code other}), and whether each pool's
		 * account is shared ({@code accounts} {@code null}: none is).
		 */
		static Tenants of(TokenBudgets budgets, Collection<ServicePool> pools, @Nullable FairnessAccounts accounts) {
			Map<String, TenantView> view = new LinkedHashMap<>(budgets.view());
			Map<String, Map<String, TenantView.Share>> shares = new LinkedHashMap<>();
			Map<String, FairnessAccounts.Status> fairness = new TreeMap<>();
			for (ServicePool pool : pools) {
				FairnessAccounts.Status status = accounts == null ? null : accounts.status(pool.serviceId());
				fairness.put(pool.serviceId(), status == null ? FairnessAccounts.Status.LOCAL : status);
				for (TenantShare s : pool.queues().tenantShares()) {
					String tenant = budgets.directory().reported(s.tenant());
					shares.computeIfAbsent(tenant, k -> new TreeMap<>())
						.merge(pool.serviceId(),
								new TenantView.Share(s.servedTokens(), s.share(), s.fairShare(), s.queued()),
								(a, b) -> new TenantView.Share(a.servedTokens() + b.servedTokens(),
										a.share() + b.share(), a.fairShare() + b.fairShare(), a.queued() + b.queued()));
				}
			}
			shares.forEach((tenant, byPool) -> {
				TenantView v = view.get(tenant);
				if (v != null) {
					view.put(tenant, v.withShares(byPool));
				}
			});
			return new Tenants(budgets.mode().name().toLowerCase(Locale.ROOT), budgets.storeKind(), view, fairness);
		}

	}

	/**
	 * Request bodies held in memory ({@code dualmap.max-buffered-size}).
	 *
	 * @param usedBytes held now
	 * @param limitBytes the budget
	 * @param rejections requests answered 503 for a full budget since startup
	 */
	public record Buffers(long usedBytes, long limitBytes, long rejections) {

		static Buffers of(RequestBuffers buffers) {
			return new Buffers(buffers.used(), buffers.limit(), buffers.rejections());
		}

	}

	/**
	 * Replica sync ({@code dualmap.replicas.*}), counted since this replica started.
	 *
	 * @param replica this replica's id, as its peers see it
	 * @param hashing the prompt hashing every peer must share
	 * @param peers the replicas the next publication goes to
	 * @param buffered releases waiting to be published
	 * @param sent releases delivered, once per peer
	 * @param dropped releases not published because the buffer was full
	 * @param failedPublications publications to one peer that failed
	 * @param applied peers' releases that entered a shadow index here
	 * @param ignored peers' releases for an instance or service unknown here
	 * @param refusedBatches peers' batches refused for other prompt hashing
	 * @param bootstrap the snapshot learned from a peer at start, or {@code null} (none
	 * asked for, none answered yet, or bootstrap off)
	 * @param shareLoad whether replicas share their load
	 * ({@code dualmap.replicas.share-load})
	 * @param loadPeers peers whose published load counts here now (published within the
	 * load TTL)
	 */
	public record Replicas(String replica, String hashing, List<String> peers, int buffered, long sent, long dropped,
			long failedPublications, long applied, long ignored, long refusedBatches,
			ReplicaPublisher.@Nullable Bootstrap bootstrap, boolean shareLoad, int loadPeers) {

		public static Replicas of(ReplicaSync sync, ReplicaPublisher publisher) {
			return new Replicas(sync.replicaId(), sync.hashing(),
					publisher.peers().stream().map(Object::toString).toList(), sync.buffered(), sync.sent(),
					sync.dropped(), sync.failedPublications(), sync.applied(), sync.ignored(), sync.refusedBatches(),
					publisher.bootstrapped(), sync.sharesLoad(), sync.loadPeers());
		}

	}

	/**
	 * The fields of {@link QueueSettings} but the mode, durations in milliseconds.
	 *
	 * @param maxPrefillRequests release while fewer requests are in prefill on the
	 * instance
	 * @param maxPrefillTokens and while its uncached tokens in prefill plus the next
	 * request's stay within this
	 * @param agingMs a request queued longer is served in arrival order
	 * @param maxQueuedPerInstance queued requests one instance may hold
	 * @param maxQueuedPerPool queued requests the pool may hold
	 * @param maxWaitMs a request queued this long expires
	 * @param expiry what happens to an expired request ({@code reject} or
	 * {@code dispatch})
	 * @param maxMigrations times the rebalancer may move one queued request
	 * @param migrationMargin improvement of a move as a fraction of the SLO
	 * @param maxMovesPerEvent moves per rebalancing pass
	 * @param unavailableRetryAfterSeconds {@code Retry-After} of a 503 when no instance
	 * accepts requests
	 * @param idlePull whether idle instances pull queued requests
	 * @param sloAware whether other SLO classes age in proportion and looser ones are
	 * shed first
	 * @param maxWaitShare share of its own SLO a request may wait before it expires (0:
	 * off)
	 * @param rescue whether an expired request first goes to another instance that can
	 * start it at once and still make its SLO
	 * @param rescueToQueue whether, failing that, it joins the queue of the instance with
	 * the lowest estimate when that still fits its SLO
	 * @param moveLateOnly whether hotspot migration and idle pull move only requests that
	 * would miss their SLO where they wait (hotspot moves only to an instance with room)
	 * @param shedHopeless whether a request about to be released that would miss its SLO
	 * there is rescued or answered 503 instead, while others wait
	 * @param shedBehindForeignPrefill whether such a request is not sent either behind
	 * another sender's prompt in prefill, as the engine shows without replica sync
	 * @param shedWhereOthersSend whether such a request is not sent either where the
	 * engine shows another sender's requests
	 * @param holdOnEngineQueue whether releases to an instance wait while its engine's
	 * own queue holds more requests than this gateway has in prefill there
	 * @param countQueuedPrefixes whether placement counts the prompts queued for an
	 * instance as cached there
	 * @param moveIntervalMs the hotspot moves and the idle pull run at most once per this
	 * many milliseconds (0: after every event)
	 * @param maxMoveChecksPerEvent queued requests one pass of the hotspot moves
	 * considers for a move (0: no bound)
	 * @param maxPullChecksPerEvent queued requests one pass of the idle pull looks at (0:
	 * no bound)
	 * @param rescueMaxKvUsage the rescue sends no request to an instance whose scraped KV
	 * cache usage is above this share while it holds less of the prompt or runs another
	 * sender's requests without replica sync (1: off)
	 */
	public record Dispatch(int maxPrefillRequests, long maxPrefillTokens, long agingMs, int maxQueuedPerInstance,
			int maxQueuedPerPool, long maxWaitMs, String expiry, int maxMigrations, double migrationMargin,
			int maxMovesPerEvent, long unavailableRetryAfterSeconds, boolean idlePull, boolean sloAware,
			double maxWaitShare, boolean rescue, boolean rescueToQueue, boolean moveLateOnly, boolean shedHopeless,
			boolean shedBehindForeignPrefill, boolean shedWhereOthersSend, boolean holdOnEngineQueue,
			boolean countQueuedPrefixes, long moveIntervalMs, int maxMoveChecksPerEvent, int maxPullChecksPerEvent,
			double rescueMaxKvUsage) {

		static Dispatch of(QueueSettings q) {
			return new Dispatch(q.maxPrefillRequests(), q.maxPrefillTokens(), millis(q.agingNanos()),
					q.maxQueuedPerInstance(), q.maxQueuedPerPool(), millis(q.maxWaitNanos()),
					q.expiry().name().toLowerCase(Locale.ROOT), q.maxMigrations(), q.migrationMargin(),
					q.maxMovesPerTrigger(), q.unavailableRetryAfterSeconds(), q.idlePull(), q.sloAware(),
					q.maxWaitShare(), q.rescue(), q.rescueToQueue(), q.moveLateOnly(), q.shedHopeless(),
					q.shedBehindForeignPrefill(), q.shedWhereOthersSend(), q.holdOnEngineQueue(),
					q.countQueuedPrefixes(), millis(q.moveIntervalNanos()), q.maxMoveChecksPerTrigger(),
					q.maxPullChecksPerTrigger(), q.rescueMaxKvUsage());
		}

	}

	/**
	 * What a pool's dispatch queues hold now and did since startup. In pass-through mode
	 * nothing is queued and nothing moves, but releases and rejections still count.
	 *
	 * @param queued requests waiting in the gateway now
	 * @param migrations queued requests moved off a hotspot or pulled by an idle other
	 * candidate
	 * @param rerouted queued requests moved because their instance left, was drained or
	 * became unhealthy
	 * @param rescues requests placed at their wait bound on another instance that could
	 * still make their SLO, instead of being rejected (sent at once or queued there)
	 * @param rescuesQueued of those, the ones queued there because no instance could
	 * start them at once
	 * @param hopelessShed requests answered 503 when about to be released because they
	 * would have missed their SLO there while others waited (in {@code rejections} too)
	 * @param hopelessShedForOthers of those, the ones shed while nothing else waited in
	 * this gateway's queues: for other senders' requests, its peers' or those the engine
	 * showed
	 * @param rejections requests the queues rejected (429 and 503)
	 * @param releases requests sent to an instance
	 * @param rejectionsByStatus requests answered 429 or 503 instead of being sent, by
	 * status: the queues' rejections plus requests every candidate refused
	 */
	public record Queue(int queued, long migrations, long rerouted, long rescues, long rescuesQueued, long hopelessShed,
			long hopelessShedForOthers, long rejections, long releases, Map<Integer, Long> rejectionsByStatus) {

	}

	/**
	 * The fields of {@link SchedulerSettings}, durations in milliseconds.
	 *
	 * @param virtualNodes virtual nodes per unit of weight on each ring
	 * @param blockTokens nominal tokens per prompt block
	 * @param minPrefixDepth routing key depth of a prefix that is not hot
	 * @param maxPrefixDepth deepest a hot prefix may be expanded
	 * @param hotWindow requests in the hot-prefix window
	 * @param hotRatio share above which a prefix is expanded
	 * @param hotDropRatio share below which an expansion is dropped
	 * @param hotMinSamples requests needed before anything is expanded
	 * @param maxHotPrefixes bound on expanded prefixes
	 * @param switchFactor SLO switch threshold as a factor of the request's SLO
	 * @param switchHitCharge factor of the given-up cached prefix's prefill time a switch
	 * must gain
	 * @param hotspotFactor hotspot threshold as a factor of the mean pending tokens
	 * @param hotspotFloorTokens absolute hotspot floor in pending tokens
	 * @param hotspotMaxWaitMs queue wait that makes an instance a hotspot
	 * @param thirdChoice whether a bounded third choice is considered
	 * @param prefillMsPerToken configured tPrefill of the TTFT model
	 * @param baseTtftMs tBase of the TTFT model
	 * @param calibrationAlpha EWMA weight of one observed TTFT
	 * @param defaultSloMs TTFT objective of a request that names none
	 * @param shadowCapacityTokens assumed KV capacity until one is scraped
	 * @param staleAfterMs scraped state older than this is unknown
	 * @param slowStartMs ramp-up period of a new instance
	 * @param tieBreak how a tie on cached prefix between candidates is broken, as the
	 * property names it ({@code auto}, {@code estimate}, {@code ring-order})
	 */
	public record Settings(int virtualNodes, int blockTokens, int minPrefixDepth, int maxPrefixDepth, int hotWindow,
			double hotRatio, double hotDropRatio, int hotMinSamples, int maxHotPrefixes, double switchFactor,
			double switchHitCharge, double hotspotFactor, long hotspotFloorTokens, long hotspotMaxWaitMs,
			boolean thirdChoice, double prefillMsPerToken, long baseTtftMs, double calibrationAlpha, long defaultSloMs,
			long shadowCapacityTokens, long staleAfterMs, long slowStartMs, String tieBreak) {

		static Settings of(SchedulerSettings s) {
			return new Settings(s.virtualNodes(), s.blockTokens(), s.minPrefixDepth(), s.maxPrefixDepth(),
					s.hotWindow(), s.hotRatio(), s.hotDropRatio(), s.hotMinSamples(), s.maxHotPrefixes(),
					s.switchFactor(), s.switchHitCharge(), s.hotspotFactor(), s.hotspotFloorTokens(),
					millis(s.hotspotMaxWaitNanos()), s.thirdChoice(), s.prefillNanosPerToken() / 1e6,
					millis(s.baseTtftNanos()), s.calibrationAlpha(), millis(s.defaultSloNanos()),
					s.shadowCapacityTokens(), millis(s.staleAfterNanos()), millis(s.slowStartNanos()),
					s.tieBreak().value());
		}

	}

	/**
	 * One routed service.
	 *
	 * @param service the service id
	 * @param policy the routing policy this pool runs
	 * ({@code dualmap.pools.<service>.policy} or {@code dualmap.policy})
	 * @param dispatchMode this pool's dispatch mode
	 * @param sloTtftMs the TTFT objective of this pool's requests that name none
	 * @param dispatch this pool's dispatch queue settings
	 * @param size instances on the rings
	 * @param accepting instances that accept new work (breaker closed, not draining)
	 * @param ringRebuilds how often the rings were rebuilt (membership or weight changes)
	 * @param loadCv coefficient of variation of in-flight plus queued requests across
	 * instances
	 * @param meanPendingTokens mean pending uncached tokens over accepting instances
	 * @param ttftModel the TTFT model as calibrated now
	 * @param queue the pool's dispatch queues
	 * @param instances the instances in ring (id) order
	 * @param hotPrefixes expanded prefixes, hottest first
	 * @param warnings what an operator should look at, each naming the service
	 */
	public record Pool(String service, String policy, String dispatchMode, long sloTtftMs, Dispatch dispatch, int size,
			int accepting, long ringRebuilds, double loadCv, double meanPendingTokens, TtftModel ttftModel, Queue queue,
			List<Instance> instances, List<HotPrefix> hotPrefixes, @Nullable Directory directory,
			List<String> warnings) {

	}

	/**
	 * The pool's prefix directory ({@code dualmap-directory}).
	 *
	 * @param blocks block hashes it knows an instance for
	 * @param capacityBlocks its bound: the sum of the shadow indexes' capacities
	 */
	public record Directory(int blocks, int capacityBlocks) {

	}

	/**
	 * The TTFT model {@code (W + P + u) * tPrefill + tBase}.
	 *
	 * @param prefillMsPerToken tPrefill as calibrated from observed TTFTs
	 * @param configuredPrefillMsPerToken tPrefill as configured
	 * @param baseMs tBase
	 */
	public record TtftModel(double prefillMsPerToken, double configuredPrefillMsPerToken, long baseMs) {

	}

	/**
	 * One instance: its place on the rings, the router's accounting and the scraped
	 * engine state.
	 *
	 * @param id instance id (discovery instance id, else host:port)
	 * @param uri where it is reached, {@code null} if it left while being described
	 * @param weight relative weight on the rings
	 * @param virtualNodes virtual nodes on each ring
	 * @param firstCandidateShare estimated share of keys whose first candidate it is
	 * @param secondCandidateShare estimated share of keys whose second candidate it is
	 * @param healthy whether it may get requests: its circuit breaker lets them through
	 * and it is responsive
	 * @param breaker circuit breaker state (CLOSED, OPEN, HALF_OPEN, ...)
	 * @param responsive {@code false} while taken out because nothing came from it for
	 * {@code dualmap.scrape.unresponsive-after}
	 * @param draining whether it was drained (through this endpoint or
	 * {@code DualMapRegistry.drain})
	 * @param idle no request in flight and none queued for it: a drained instance may be
	 * removed
	 * @param hotspot whether it counts as a hotspot now
	 * @param queuedTokens uncached tokens the router holds for it (W)
	 * @param prefillTokens uncached tokens sent and still in prefill (P)
	 * @param localPendingTokens W + P
	 * @param pendingTokens what policies see: W + P with the peers' published W + P, or
	 * the scraped queue in tokens when larger
	 * @param inFlight requests sent and not finished
	 * @param queuedRequests requests waiting for it in the pool's dispatch queues
	 * @param prefillRequests requests sent whose first token has not come back
	 * @param peerPrefillRequests the other gateway replicas' requests in prefill on it,
	 * as they last published (replica sync with load sharing; else 0)
	 * @param peerPendingTokens the other replicas' W + P for it, as they last published
	 * @param peerQueuedTokens of which W: what they hold queued for it (others waiting,
	 * for {@code shed-hopeless})
	 * @param peerPrefillPairs the attention pairs of their prefill on it, as published by
	 * those that publish them
	 * @param dispatched requests sent since it joined
	 * @param estimatedHitRate share of routed prompt tokens the shadow index expected to
	 * be cached, {@code null} before any
	 * @param shadowBlocks block hashes in its shadow index
	 * @param shadowCapacityBlocks capacity of its shadow index
	 * @param scrapeFailures failed scrapes since it was first seen
	 * @param memberForMs time since it joined the pool
	 * @param ttftEstimateMs the TTFT its own fitted model expects of a cold 4,096-token
	 * prompt with nothing ahead of it (the {@code dualmap.instance.ttft.estimate} gauge),
	 * {@code null} with the linear TTFT model and while the fit does not know that
	 * prompt's cost to within {@code InstanceState.REFERENCE_MAX_RELATIVE_ERROR}
	 * @param engine the last scraped engine state, {@code null} before the first scrape
	 */
	public record Instance(String id, @Nullable String uri, double weight, int virtualNodes, double firstCandidateShare,
			double secondCandidateShare, boolean healthy, String breaker, boolean responsive, boolean draining,
			boolean idle, boolean hotspot, long queuedTokens, long prefillTokens, long localPendingTokens,
			long pendingTokens, int inFlight, int queuedRequests, int prefillRequests, int peerPrefillRequests,
			long peerPendingTokens, long peerQueuedTokens, long peerPrefillPairs, long dispatched,
			@Nullable Double estimatedHitRate, int shadowBlocks, int shadowCapacityBlocks, long scrapeFailures,
			long memberForMs, @Nullable Long ttftEstimateMs, @Nullable Engine engine) {

	}

	/**
	 * Engine state as last scraped.
	 *
	 * @param waiting requests waiting in the engine, {@code null} when not reported
	 * @param running requests running, {@code null} when not reported
	 * @param kvUsage fraction of KV cache in use, {@code null} when not reported
	 * @param prefixHitRate engine-reported prefix cache hit rate over its lifetime,
	 * {@code null} when not reported
	 * @param kvCapacityTokens KV capacity in tokens, {@code null} when not reported
	 * @param backlogTokens uncached prompt tokens the engine has admitted into prefill
	 * and not yet computed, every router's requests, as estimated from its prefix-cache
	 * counters ({@code dualmap.scrape.engine-backlog}); {@code null} when not estimated
	 * (switched off) or the scrape is stale
	 * @param foreignRequests requests the engine held, running and waiting, beyond this
	 * gateway's in flight on the instance when it was scraped: other gateway replicas'
	 * (replica sync publishes their prefill, not this), or clients that bypass the
	 * gateway; {@code null} when the engine reports no request counts
	 * @param ageMs time since it was scraped
	 * @param stale whether routing ignores it (older than stale-after, or the last scrape
	 * failed)
	 * @param lastScrapeFailed whether the most recent scrape failed
	 */
	public record Engine(@Nullable Integer waiting, @Nullable Integer running, @Nullable Double kvUsage,
			@Nullable Double prefixHitRate, @Nullable Long kvCapacityTokens, @Nullable Long backlogTokens,
			@Nullable Integer foreignRequests, long ageMs, boolean stale, boolean lastScrapeFailed) {

	}

	/**
	 * An expanded (hot) prefix.
	 *
	 * @param hash its chain hash as 16 hex digits; never prompt text
	 * @param share its share of the hot-prefix window
	 */
	public record HotPrefix(String hash, double share) {

	}

	static long millis(long nanos) {
		return nanos / 1_000_000;
	}

}
