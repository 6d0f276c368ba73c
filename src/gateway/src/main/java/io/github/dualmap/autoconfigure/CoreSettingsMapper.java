package io.github.dualmap.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.SchedulerSettings;
import org.jspecify.annotations.Nullable;

/**
 * The one place the {@code dualmap.*} properties map to the core's settings: the
 * scheduler's and the dispatch queues' of the gateway and of each pool (its
 * {@code dualmap.pools.<service>.*} over the global values), each pool's routing policy,
 * and every TTFT objective configured.
 */
public final class CoreSettingsMapper {

	private final DualMapProperties properties;

	public CoreSettingsMapper(DualMapProperties properties) {
		this.properties = properties;
	}

	/**
	 * The scheduler settings of the gateway, before per-pool overrides. What is left to
	 * the dispatch mode is resolved where a pool meets its mode
	 * ({@link SchedulerSettings#forDispatchMode}).
	 */
	public SchedulerSettings schedulerSettings() {
		return schedulerSettings(this.properties.getSlo().getTtft());
	}

	/**
	 * The scheduler settings of one service's pool: the global ones with its
	 * {@code dualmap.pools.<service>.slo.ttft}.
	 */
	public SchedulerSettings schedulerSettings(String serviceId) {
		PoolProperties pool = this.properties.getPools().get(serviceId);
		Duration ttft = pool != null ? pool.getSlo().getTtft() : null;
		return schedulerSettings(ttft != null ? ttft : this.properties.getSlo().getTtft());
	}

	/** The routing policy of one service's pool. */
	public String policyOf(String serviceId) {
		PoolProperties pool = this.properties.getPools().get(serviceId);
		return pool != null && pool.getPolicy() != null ? pool.getPolicy() : this.properties.getPolicy();
	}

	/** The dispatch queue settings of the gateway, before per-pool overrides. */
	public QueueSettings queueSettings() {
		return withOverrides(null);
	}

	/**
	 * The dispatch queue settings of one service's pool: the global ones with its
	 * {@code dualmap.pools.<service>.dispatch.*}.
	 */
	public QueueSettings queueSettings(String serviceId) {
		PoolProperties pool = this.properties.getPools().get(serviceId);
		return withOverrides(pool != null ? pool.getDispatch() : null);
	}

	/**
	 * Every TTFT objective configured: {@code dualmap.slo.ttft}, each class's and each
	 * pool's.
	 */
	public List<Duration> sloTtfts() {
		List<Duration> out = new ArrayList<>();
		out.add(this.properties.getSlo().getTtft());
		this.properties.getSlo().getClasses().values().forEach(c -> {
			if (c.getTtft() != null) {
				out.add(c.getTtft());
			}
		});
		this.properties.getPools().values().forEach(p -> {
			if (p.getSlo().getTtft() != null) {
				out.add(p.getSlo().getTtft());
			}
		});
		return out;
	}

	private SchedulerSettings schedulerSettings(Duration defaultSlo) {
		DualMapProperties p = this.properties;
		HotPrefixProperties hotPrefix = p.getHotPrefix();
		HotspotProperties hotspot = p.getHotspot();
		TtftProperties ttft = p.getTtft();
		ColdProperties cold = p.getCold();
		return SchedulerSettings.custom()
			.virtualNodes(p.getRing().getVirtualNodes())
			.blockTokens(p.getPrompt().getBlockTokens())
			.minPrefixDepth(hotPrefix.getMinDepth())
			.maxPrefixDepth(hotPrefix.getMaxDepth())
			.hotWindow(hotPrefix.getWindow())
			.hotRatio(hotPrefix.getRatio())
			.hotDropRatio(hotPrefix.getDropRatio())
			.hotMinSamples(hotPrefix.getMinSamples())
			.maxHotPrefixes(hotPrefix.getMaxEntries())
			.switchFactor(p.getSwitchFactor())
			.switchHitCharge(p.getSwitchHitCharge())
			.switchMaxKvUsage(p.getSwitchMaxKvUsage())
			.tieBreak(p.getTieBreak())
			.hotspotFactor(hotspot.getFactor())
			.hotspotFloorTokens(hotspot.getFloorTokens())
			.hotspotMaxWait(hotspot.getMaxQueueWait())
			.thirdChoice(p.isThirdChoice())
			.prefillNanosPerToken(ttft.getPrefillPerToken().toNanos())
			.baseTtft(ttft.getBase())
			.calibrationAlpha(ttft.getCalibrationAlpha())
			.ttftModel(ttft.getModel())
			.attentionNanosPerPair(ttft.getAttentionPerMillionPairs().toNanos() / 1e6)
			.ttftForgetting(ttft.getForgetting())
			.defaultSlo(defaultSlo)
			.shadowCapacityTokens(p.getShadow().getCapacityTokens())
			.staleAfter(p.getScrape().getStaleAfter())
			.engineBacklog(p.getScrape().isEngineBacklog())
			.slowStart(p.getSlowStart())
			.coldCachedShare(
					cold.getCachedShare() != null ? cold.getCachedShare() : SchedulerSettings.DEFAULT_COLD_CACHED_SHARE)
			.coldCandidatesMax(cold.getCandidatesMax())
			.coldLoadStepTokens(cold.getLoadStepTokens())
			.ttftRelaxAfter(ttft.getRelaxAfter())
			.build();
	}

	private QueueSettings withOverrides(PoolProperties.@Nullable Dispatch pool) {
		DispatchProperties d = this.properties.getDispatch();
		PoolProperties.Dispatch o = pool != null ? pool : new PoolProperties.Dispatch();
		return QueueSettings.custom()
			.mode(o.getMode() != null ? o.getMode() : d.getMode())
			.maxPrefillRequests(
					o.getMaxPrefillRequests() != null ? o.getMaxPrefillRequests() : d.getMaxPrefillRequests())
			.maxPrefillTokens(o.getMaxPrefillTokens() != null ? o.getMaxPrefillTokens() : d.getMaxPrefillTokens())
			.aging(d.getAging())
			.maxQueuedPerInstance(d.getMaxQueuedPerInstance())
			.maxQueuedPerPool(d.getMaxQueuedPerPool())
			.maxWait(d.getMaxWait())
			.expiry(d.getExpiry())
			.maxMigrations(d.getMaxMigrations())
			.migrationMargin(d.getMigrationMargin())
			.maxMovesPerTrigger(d.getMaxMovesPerEvent())
			.maxMoveChecksPerTrigger(d.getMaxMoveChecksPerEvent())
			.maxPullChecksPerTrigger(d.getMaxPullChecksPerEvent())
			.rescueMaxKvUsage(d.getRescueMaxKvUsage())
			.moveInterval(d.getMoveInterval())
			.unavailableRetryAfter(d.getUnavailableRetryAfter())
			.idlePull(d.isIdlePull())
			.sloAware(d.isSloAware())
			.maxWaitShare(d.getMaxWaitShare())
			.rescue(d.isRescue())
			.rescueToQueue(d.isRescueToQueue())
			.moveLateOnly(d.isMoveLateOnly())
			.shedHopeless(d.isShedHopeless())
			.shedBehindForeignPrefill(d.isShedBehindForeignPrefill())
			.shedWhereOthersSend(d.isShedWhereOthersSend())
			.holdOnEngineQueue(d.isHoldOnEngineQueue())
			.countQueuedPrefixes(
					o.getCountQueuedPrefixes() != null ? o.getCountQueuedPrefixes() : d.isCountQueuedPrefixes())
			.build();
	}

}
