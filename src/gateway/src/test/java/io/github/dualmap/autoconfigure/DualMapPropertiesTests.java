package io.github.dualmap.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.dualmap.core.DispatchMode;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.RoutingPolicies;
import io.github.dualmap.core.SchedulerSettings;
import io.github.dualmap.core.TieBreak;
import io.github.dualmap.core.TtftModel;
import io.github.dualmap.gateway.DualMapRegistry;
import io.github.dualmap.gateway.EngineScraping;
import io.github.dualmap.gateway.RequestBuffers;
import io.github.dualmap.gateway.RequestIdFilter;
import io.github.dualmap.gateway.ServicePool;
import io.github.dualmap.gateway.StoredResponses;
import io.github.dualmap.prompt.InvalidRequestException;
import io.github.dualmap.prompt.PromptParser;
import io.github.dualmap.replica.ReplicaPublisher;
import io.github.dualmap.replica.ReplicaSync;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.netty.http.server.HttpServer;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.reactor.netty.NettyServerCustomizer;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.origin.Origin;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.validation.FieldError;
import org.springframework.validation.ObjectError;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Defaults of {@code dualmap.*}, their mapping to the core settings, and startup
 * validation messages that name the bad property.
 */
class DualMapPropertiesTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DualMapAutoConfiguration.class))
		.withPropertyValues("dualmap.scrape.enabled=false", "dualmap.services=llm");

	@Test
	void defaultsAreTheReferenceValues() {
		this.runner.run(context -> {
			SchedulerSettings s = context.getBean(DualMapProperties.class).toSchedulerSettings();
			assertThat(s).isEqualTo(SchedulerSettings.custom().defaultSlo(Duration.ofSeconds(5)).build());
			assertThat(s.prefillNanosPerToken()).isEqualTo(25_000);
			assertThat(context.getBean(DualMapRegistry.class).policyName()).isEqualTo("dualmap");
		});
	}

	@Test
	void keepAliveReadsAreOnUnlessTurnedOff() {
		this.runner.run(context -> assertThat(context).hasBean("dualMapKeepAliveReads")
			.getBean(DualMapProperties.class)
			.extracting(p -> p.getServer().isKeepAliveReads())
			.isEqualTo(true));
		this.runner.withPropertyValues("dualmap.server.keep-alive-reads=false")
			.run(context -> assertThat(context).doesNotHaveBean("dualMapKeepAliveReads"));
	}

	@Test
	void aConnectionWaitingForARequestIsClosedAfter75SecondsUnlessSpringBootsIdleTimeoutIsSet() {
		this.runner.run(context -> {
			NettyServerCustomizer customizer = context.getBean("dualMapIdleTimeout", NettyServerCustomizer.class);
			assertThat(customizer.apply(HttpServer.create()).configuration().idleTimeout())
				.isEqualTo(Duration.ofSeconds(75));
		});
		this.runner.withPropertyValues("server.netty.idle-timeout=10m")
			.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean("dualMapIdleTimeout"));
	}

	@Test
	void http10ResponsesAreCloseDelimitedUnlessTurnedOff() {
		this.runner.run(context -> assertThat(context).hasBean("dualMapHttp10Responses")
			.getBean(DualMapProperties.class)
			.extracting(p -> p.getServer().isHttp10CloseDelimited())
			.isEqualTo(true));
		this.runner.withPropertyValues("dualmap.server.http10-close-delimited=false")
			.run(context -> assertThat(context).doesNotHaveBean("dualMapHttp10Responses"));
	}

	@Test
	void theHeaderReadTimeoutIsThirtySecondsUnlessSetAndZeroTurnsItOff() {
		this.runner.run(context -> assertThat(context).hasBean("dualMapHeaderReadTimeout")
			.getBean(DualMapProperties.class)
			.extracting(p -> p.getServer().getHeaderReadTimeout())
			.isEqualTo(Duration.ofSeconds(30)));
		this.runner.withPropertyValues("dualmap.server.header-read-timeout=300ms")
			.run(context -> assertThat(context).hasBean("dualMapHeaderReadTimeout")
				.getBean(DualMapProperties.class)
				.extracting(p -> p.getServer().getHeaderReadTimeout())
				.isEqualTo(Duration.ofMillis(300)));
		// Off: no deadline, but the server still answers heads it cannot decode with the
		// error body.
		for (String off : new String[] { "0", "0s", "0ms" }) {
			this.runner.withPropertyValues("dualmap.server.header-read-timeout=" + off)
				.run(context -> assertThat(context).hasNotFailed()
					.hasBean("dualMapHeaderReadTimeout")
					.getBean(DualMapProperties.class)
					.extracting(p -> p.getServer().getHeaderReadTimeout())
					.isEqualTo(Duration.ZERO));
		}
		expectFailure("dualmap.server.header-read-timeout=-1s",
				"dualmap.server.header-read-timeout must be >= 0 (0: off)");
	}

	@Test
	void propertiesReachTheSchedulerSettings() {
		this.runner
			.withPropertyValues("dualmap.switch-factor=0.7", "dualmap.switch-hit-charge=0.5",
					"dualmap.ttft.prefill-per-token=40us", "dualmap.hot-prefix.window=300",
					"dualmap.ring.virtual-nodes=80", "dualmap.slo.ttft=2s", "dualmap.scrape.engine-backlog=false")
			.run(context -> {
				SchedulerSettings s = context.getBean(DualMapRegistry.class).settings();
				assertThat(s.engineBacklog()).isFalse();
				assertThat(s.switchFactor()).isEqualTo(0.7);
				assertThat(s.switchHitCharge()).isEqualTo(0.5);
				assertThat(s.prefillNanosPerToken()).isEqualTo(40_000);
				assertThat(s.hotWindow()).isEqualTo(300);
				assertThat(s.virtualNodes()).isEqualTo(80);
				assertThat(s.defaultSloNanos()).isEqualTo(Duration.ofSeconds(2).toNanos());
			});
	}

	@Test
	void theTtftModelPropertiesReachTheSchedulerSettings() {
		this.runner.run(context -> {
			SchedulerSettings s = context.getBean(DualMapRegistry.class).settings();
			assertThat(s.ttftModel()).isEqualTo(SchedulerSettings.DEFAULT_TTFT_MODEL);
			assertThat(s.attentionNanosPerPair()).isEqualTo(SchedulerSettings.DEFAULT_ATTENTION_NANOS_PER_PAIR);
			assertThat(s.ttftForgetting()).isEqualTo(SchedulerSettings.DEFAULT_TTFT_FORGETTING);
		});
		this.runner
			.withPropertyValues("dualmap.ttft.model=linear", "dualmap.ttft.attention-per-million-pairs=2500us",
					"dualmap.ttft.forgetting=0.95")
			.run(context -> {
				SchedulerSettings s = context.getBean(DualMapRegistry.class).settings();
				assertThat(s.ttftModel()).isEqualTo(TtftModel.LINEAR);
				assertThat(s.attentionNanosPerPair()).isEqualTo(2.5);
				assertThat(s.ttftForgetting()).isEqualTo(0.95);
			});
		expectFailure("dualmap.ttft.model=quadratic", "dualmap.ttft.model");
		expectFailure("dualmap.ttft.attention-per-million-pairs=0s",
				"dualmap.ttft.attention-per-million-pairs must be > 0");
		expectFailure("dualmap.ttft.forgetting=0", "dualmap.ttft.forgetting must be in (0, 1]");
		expectFailure("dualmap.ttft.forgetting=1.5", "dualmap.ttft.forgetting must be in (0, 1]");
		this.runner.withPropertyValues("dualmap.switch-max-kv-usage=0.9")
			.run(context -> assertThat(context.getBean(DualMapRegistry.class).settings().switchMaxKvUsage())
				.isEqualTo(0.9));
		expectFailure("dualmap.switch-max-kv-usage=0", "dualmap.switch-max-kv-usage must be in (0, 1]");
		expectFailure("dualmap.switch-max-kv-usage=1.5", "dualmap.switch-max-kv-usage must be in (0, 1]");
		this.runner.run(context -> assertThat(context.getBean(DualMapRegistry.class).settings().tieBreak())
			.isEqualTo(TieBreak.AUTO));
		this.runner.withPropertyValues("dualmap.tie-break=ring-order")
			.run(context -> assertThat(context.getBean(DualMapRegistry.class).settings().tieBreak())
				.isEqualTo(TieBreak.RING_ORDER));
		expectFailure("dualmap.tie-break=random", "dualmap.tie-break");
	}

	@Test
	void namedValuesBindWithoutCaseDashesOrUnderscoresAndARefusalListsTheNames() {
		this.runner
			.withPropertyValues("dualmap.tie-break=RING_ORDER", "dualmap.dispatch.mode=Pass-Through",
					"dualmap.ttft.model=linear", "dualmap.dispatch.expiry=dispatch", "dualmap.tenants.mode=shadow",
					"dualmap.tenants.redis.failure-mode=closed")
			.run(context -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(DualMapRegistry.class).settings().tieBreak()).isEqualTo(TieBreak.RING_ORDER);
				assertThat(context.getBean(DualMapProperties.class).getDispatch().getMode())
					.isEqualTo(DispatchMode.PASS_THROUGH);
			});
		expectFailure("dualmap.tie-break=random", "'random' is none of: auto, estimate, ring-order");
		expectFailure("dualmap.dispatch.mode=later", "'later' is none of: queue, pass-through");
		expectFailure("dualmap.ttft.model=cubic", "'cubic' is none of: ");
		expectFailure("dualmap.dispatch.expiry=drop", "'drop' is none of: reject, dispatch");
		expectFailure("dualmap.tenants.store=disk", "'disk' is none of: local, redis");
		expectFailure("dualmap.tenants.redis.failure-mode=ajar", "'ajar' is none of: ");
	}

	@Test
	void unsetTheColdRuleIsOnForAPoolThatDispatchesAtOnceAndOffBehindTheQueue() {
		this.runner
			.withPropertyValues("dualmap.services=queued,direct", "dualmap.pools.direct.dispatch.mode=pass-through")
			.run(context -> {
				DualMapRegistry registry = context.getBean(DualMapRegistry.class);
				assertThat(registry.settings().spreadsCold()).isFalse();
				assertThat(registry.service("queued").instancePool().settings().spreadsCold()).isFalse();
				assertThat(registry.service("direct").instancePool().settings().coldCachedShare())
					.isEqualTo(SchedulerSettings.COLD_CACHED_SHARE);
				assertThat(context.getBean(DualMapProperties.class).toSchedulerSettings().coldCachedShare())
					.as("left to each simulated row's mode")
					.isNaN();
			});
		this.runner.withPropertyValues("dualmap.services=any", "dualmap.dispatch.mode=pass-through").run(context -> {
			assertThat(context.getBean(DualMapRegistry.class).settings().coldCachedShare())
				.isEqualTo(SchedulerSettings.COLD_CACHED_SHARE);
			assertThat(context.getBean(DualMapRegistry.class).service("any").instancePool().settings().spreadsCold())
				.isTrue();
		});
		this.runner.withPropertyValues("dualmap.dispatch.mode=pass-through", "dualmap.cold.cached-share=0")
			.run(context -> assertThat(context.getBean(DualMapRegistry.class).settings().spreadsCold())
				.as("configured off")
				.isFalse());
		this.runner.withPropertyValues("dualmap.cold.cached-share=0.5")
			.run(context -> assertThat(context.getBean(DualMapRegistry.class).settings().coldCachedShare())
				.as("configured on behind the queue")
				.isEqualTo(0.5));
	}

	@Test
	void theColdRuleAndTtftRelaxationPropertiesReachTheSchedulerSettings() {
		this.runner.run(context -> {
			SchedulerSettings s = context.getBean(DualMapRegistry.class).settings();
			assertThat(s.spreadsCold()).isFalse();
			assertThat(s.coldCandidatesMax()).isEqualTo(SchedulerSettings.DEFAULT_COLD_CANDIDATES_MAX);
			assertThat(s.coldLoadStepTokens()).isEqualTo(SchedulerSettings.DEFAULT_COLD_LOAD_STEP_TOKENS);
			assertThat(s.ttftRelaxAfterNanos()).isEqualTo(SchedulerSettings.DEFAULT_TTFT_RELAX_AFTER.toNanos());
		});
		this.runner
			.withPropertyValues("dualmap.cold.cached-share=0.3", "dualmap.cold.candidates-max=3",
					"dualmap.cold.load-step-tokens=8192", "dualmap.ttft.relax-after=0s")
			.run(context -> {
				SchedulerSettings s = context.getBean(DualMapRegistry.class).settings();
				assertThat(s.coldCachedShare()).isEqualTo(0.3);
				assertThat(s.coldCandidatesMax()).isEqualTo(3);
				assertThat(s.coldLoadStepTokens()).isEqualTo(8192);
				assertThat(s.ttftRelaxAfterNanos()).isZero();
			});
		expectFailure("dualmap.cold.cached-share=1.5", "dualmap.cold.cached-share must be in [0, 1]");
		expectFailure("dualmap.cold.cached-share=-0.1", "dualmap.cold.cached-share must be in [0, 1]");
		expectFailure("dualmap.cold.candidates-max=1", "dualmap.cold.candidates-max must be in [2, 16]");
		expectFailure("dualmap.cold.candidates-max=17", "dualmap.cold.candidates-max must be in [2, 16]");
		expectFailure("dualmap.cold.load-step-tokens=0", "dualmap.cold.load-step-tokens must be >= 1");
		expectFailure("dualmap.ttft.relax-after=-1s", "dualmap.ttft.relax-after must be >= 0");
	}

	@Test
	void parserLimitsFollowTheirPropertiesAndTheBodySize() {
		String deep = "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"x\"}]}],"
				+ "\"response_format\":" + "{\"a\":".repeat(10) + "1" + "}".repeat(10) + "}";
		String wide = "{\"messages\":[{\"role\":\"user\",\"content\":\"" + "x".repeat(3000) + "\"}]}";
		this.runner
			.withPropertyValues("dualmap.prompt.max-nesting-depth=8", "dualmap.prompt.max-json-tokens=60",
					"dualmap.max-body-size=2KB")
			.run(context -> {
				PromptParser parser = context.getBean(PromptParser.class);
				assertThatExceptionOfType(InvalidRequestException.class)
					.isThrownBy(() -> parser.parse("/v1/chat/completions", deep.getBytes()))
					.withMessageContaining("deeper than 8 levels");
				assertThatExceptionOfType(InvalidRequestException.class)
					.isThrownBy(() -> parser.parse("/v1/chat/completions",
							("{\"messages\":[" + "{\"role\":\"user\",\"content\":\"x\"},".repeat(10)
									+ "{\"role\":\"user\",\"content\":\"x\"}]}")
								.getBytes()))
					.withMessageContaining("more than 60 JSON tokens");
				assertThatExceptionOfType(InvalidRequestException.class)
					.isThrownBy(() -> parser.parse("/v1/chat/completions", wide.getBytes()))
					.withMessageContaining("a string is longer than 2048 characters");
			});
		// By default a string may be as long as the body.
		this.runner.withPropertyValues("dualmap.max-body-size=64MB").run(context -> {
			String image = "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\","
					+ "\"image_url\":{\"url\":\"data:image/png;base64," + "A".repeat(40 * 1024 * 1024) + "\"}}]}]}";
			assertThat(context.getBean(PromptParser.class).parse("/v1/chat/completions", image.getBytes()).blocks())
				.isNotNull();
		});
	}

	@Test
	void theSilenceBoundDefaultsToTenSecondsOrFourScrapeRoundsAndZeroIsOff() {
		this.runner.run(context -> assertThat(context.getBean(DualMapProperties.class).getScrape().unresponsiveAfter())
			.isEqualTo(Duration.ofSeconds(10)));
		this.runner
			.withPropertyValues("dualmap.scrape.interval=5s", "dualmap.scrape.timeout=4s",
					"dualmap.scrape.stale-after=20s")
			.run(context -> assertThat(context.getBean(DualMapProperties.class).getScrape().unresponsiveAfter())
				.isEqualTo(Duration.ofSeconds(36)));
		this.runner.withPropertyValues("dualmap.scrape.unresponsive-after=0")
			.run(context -> assertThat(context.getBean(DualMapProperties.class).getScrape().unresponsiveAfter())
				.isZero());
	}

	@Test
	void dispatchDefaultsAreTheCoreDefaultsAndPropertiesReachTheQueues() {
		this.runner.run(context -> {
			assertThat(context.getBean(DualMapProperties.class).toQueueSettings())
				.isEqualTo(QueueSettings.ofDefaults());
			assertThat(context.getBean(DualMapProperties.class).getDispatch().getTickInterval())
				.isEqualTo(Duration.ofMillis(50));
		});
		this.runner
			.withPropertyValues("dualmap.dispatch.mode=pass-through", "dualmap.dispatch.max-prefill-requests=3",
					"dualmap.dispatch.max-prefill-tokens=4096", "dualmap.dispatch.aging=1s",
					"dualmap.dispatch.max-queued-per-instance=7", "dualmap.dispatch.max-queued-per-pool=9",
					"dualmap.dispatch.max-wait=12s", "dualmap.dispatch.expiry=dispatch",
					"dualmap.dispatch.max-migrations=0", "dualmap.dispatch.migration-margin=0.25",
					"dualmap.dispatch.max-moves-per-event=3", "dualmap.dispatch.unavailable-retry-after=2s",
					"dualmap.dispatch.idle-pull=false", "dualmap.dispatch.slo-aware=false",
					"dualmap.dispatch.max-wait-share=0.8", "dualmap.dispatch.rescue=false",
					"dualmap.dispatch.rescue-to-queue=false", "dualmap.dispatch.shed-hopeless=false",
					"dualmap.dispatch.shed-behind-foreign-prefill=false",
					"dualmap.dispatch.shed-where-others-send=false", "dualmap.dispatch.hold-on-engine-queue=false",
					"dualmap.dispatch.count-queued-prefixes=false", "dualmap.dispatch.move-interval=20ms",
					"dualmap.dispatch.max-move-checks-per-event=5", "dualmap.dispatch.max-pull-checks-per-event=6",
					"dualmap.dispatch.rescue-max-kv-usage=0.75", "dualmap.slow-start=30s")
			.run(context -> {
				DualMapRegistry registry = context.getBean(DualMapRegistry.class);
				QueueSettings q = registry.service("llm").queues().settings();
				assertThat(q).isEqualTo(QueueSettings.custom()
					.mode(DispatchMode.PASS_THROUGH)
					.maxPrefillRequests(3)
					.maxPrefillTokens(4096)
					.aging(Duration.ofSeconds(1))
					.maxQueuedPerInstance(7)
					.maxQueuedPerPool(9)
					.maxWait(Duration.ofSeconds(12))
					.expiry(QueueSettings.Expiry.DISPATCH)
					.maxMigrations(0)
					.migrationMargin(0.25)
					.maxMovesPerTrigger(3)
					.unavailableRetryAfter(Duration.ofSeconds(2))
					.idlePull(false)
					.sloAware(false)
					.maxWaitShare(0.8)
					.rescue(false)
					.rescueToQueue(false)
					.shedHopeless(false)
					.shedBehindForeignPrefill(false)
					.shedWhereOthersSend(false)
					.holdOnEngineQueue(false)
					.countQueuedPrefixes(false)
					.moveInterval(Duration.ofMillis(20))
					.maxMoveChecksPerTrigger(5)
					.maxPullChecksPerTrigger(6)
					.rescueMaxKvUsage(0.75)
					.build());
				assertThat(registry.settings().slowStartNanos()).isEqualTo(Duration.ofSeconds(30).toNanos());
			});
	}

	@Test
	void badValuesFailStartupNamingTheProperty() {
		expectFailure("dualmap.switch-factor=0", "dualmap.switch-factor must be > 0");
		expectFailure("dualmap.body-read-timeout=0s", "dualmap.body-read-timeout must be > 0");
		expectFailure("dualmap.response-idle-timeout=-1s", "dualmap.response-idle-timeout must be >= 0");
		expectFailure("dualmap.switch-hit-charge=-1", "dualmap.switch-hit-charge must be >= 0");
		expectFailure("dualmap.slow-start=-5s", "dualmap.slow-start must be >= 0");
		expectFailure("dualmap.policy=no-such-policy", "dualmap.policy names no known routing policy");
		expectFailure("dualmap.hot-prefix.max-depth=0", "dualmap.hot-prefix.max-depth must be >= 1");
		expectFailure("dualmap.ring.virtual-nodes=10001", "dualmap.ring.virtual-nodes must be <= 10000");
		expectFailure("dualmap.hot-prefix.drop-ratio=0.5",
				"dualmap.hot-prefix.drop-ratio must be <= dualmap.hot-prefix.ratio");
		expectFailure("dualmap.scrape.jitter=1.5", "dualmap.scrape.jitter must be in [0, 1)");
		expectFailure("dualmap.scrape.max-body-size=0", "dualmap.scrape.max-body-size must be > 0");
		expectFailure("dualmap.scrape.stale-after=500ms",
				"dualmap.scrape.stale-after (default 2s) must be longer than dualmap.scrape.interval");
		expectFailure("dualmap.scrape.interval=5s",
				"dualmap.scrape.stale-after (default 2s) must be longer than dualmap.scrape.interval");
		expectFailure("dualmap.scrape.max-body-size=-1MB", "dualmap.scrape.max-body-size must be > 0");
		expectFailure("dualmap.scrape.unresponsive-after=800ms",
				"dualmap.scrape.unresponsive-after must be 0 (off) or longer than interval + timeout");
		expectFailure("dualmap.ttft.prefill-per-token=0s", "dualmap.ttft.prefill-per-token must be > 0");
		expectFailure("dualmap.breaker.failure-rate-threshold=0",
				"dualmap.breaker.failure-rate-threshold must be in (0, 100]");
		expectFailure("dualmap.dispatch.max-prefill-requests=0", "dualmap.dispatch.max-prefill-requests must be >= 1");
		expectFailure("dualmap.dispatch.max-queued-per-pool=0", "dualmap.dispatch.max-queued-per-pool must be >= 1");
		expectFailure("dualmap.dispatch.max-move-checks-per-event=-1",
				"dualmap.dispatch.max-move-checks-per-event must be >= 0");
		expectFailure("dualmap.dispatch.max-pull-checks-per-event=-1",
				"dualmap.dispatch.max-pull-checks-per-event must be >= 0");
		expectFailure("dualmap.dispatch.rescue-max-kv-usage=0",
				"dualmap.dispatch.rescue-max-kv-usage must be in (0, 1]");
		expectFailure("dualmap.dispatch.rescue-max-kv-usage=1.5",
				"dualmap.dispatch.rescue-max-kv-usage must be in (0, 1]");
		expectFailure("dualmap.dispatch.migration-margin=1", "dualmap.dispatch.migration-margin must be in [0, 1)");
		expectFailure("dualmap.dispatch.max-wait=0s", "dualmap.dispatch.max-wait must be > 0");
		expectFailure("dualmap.dispatch.max-wait-share=-0.5", "dualmap.dispatch.max-wait-share must be >= 0");
		expectFailure("dualmap.dispatch.max-wait-share=1e6", "dualmap.dispatch.max-wait-share must be <= 1000");
		expectFailure("dualmap.dispatch.tick-interval=0s", "dualmap.dispatch.tick-interval must be >= 1ms");
		expectFailure("dualmap.dispatch.move-interval=-1ms", "dualmap.dispatch.move-interval must be >= 0");
		expectFailure("dualmap.dispatch.mode=later", "dualmap.dispatch.mode");
		expectFailure("dualmap.replicas.enabled=true",
				"dualmap.replicas.token must be set when dualmap.replicas.enabled=true");
		expectFailure(List.of("dualmap.replicas.enabled=true", "dualmap.replicas.token=s3cret"),
				"dualmap.replicas.token must be at least 16 visible ASCII characters");
		// Not ASCII: a header carries it as other bytes than configured, so no peer would
		// ever match it.
		expectFailure(List.of("dualmap.replicas.enabled=true", "dualmap.replicas.token=s3cret-\u20ac-token-123456"),
				"dualmap.replicas.token must be at least 16 visible ASCII characters");
		expectFailure(List.of("dualmap.replicas.enabled=true", "dualmap.replicas.token=s3cret token with spaces"),
				"dualmap.replicas.token must be at least 16 visible ASCII characters");
		expectFailure("dualmap.replicas.peers=ftp://gateway-1",
				"dualmap.replicas.peers must be absolute http or https");
		expectFailure("dualmap.replicas.flush-interval=0s", "dualmap.replicas.flush-interval, timeout");
		expectFailure("dualmap.replicas.path=releases", "dualmap.replicas.path must be a path starting with /");
		expectFailure("dualmap.replicas.path=/bad%zz", "dualmap.replicas.path must be a path starting with /");
		expectFailure("dualmap.replicas.max-batch-releases=0", "dualmap.replicas.max-batch-releases must be >= 1");
		expectFailure("dualmap.replicas.load-ttl=50ms",
				"dualmap.replicas.load-ttl must be longer than dualmap.replicas.flush-interval");
	}

	@Test
	void switchesReadOnAndOffAsTheirPropertiesBindAndRefuseAnythingElse() {
		ApplicationContextRunner scraping = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DualMapAutoConfiguration.class))
			.withPropertyValues("dualmap.services=llm");
		scraping.withPropertyValues("dualmap.scrape.enabled=on")
			.run(context -> assertThat(context).hasNotFailed().hasSingleBean(EngineScraping.class));
		scraping.withPropertyValues("dualmap.scrape.enabled=OFF")
			.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(EngineScraping.class));
		scraping.run(context -> assertThat(context).hasSingleBean(EngineScraping.class));
		scraping.withPropertyValues("dualmap.scrape.enabled=bogus")
			.run(context -> assertThat(failureMessages(context))
				.contains("Failed to bind properties under 'dualmap.scrape.enabled' to java.lang.Boolean"));
		this.runner.withPropertyValues("dualmap.enabled=no")
			.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(DualMapRegistry.class));
		this.runner.withPropertyValues("dualmap.enabled=1")
			.run(context -> assertThat(context).hasSingleBean(DualMapRegistry.class));
		expectFailure("dualmap.enabled=yes please", "Failed to bind properties under 'dualmap.enabled'");
		this.runner
			.withPropertyValues("dualmap.replicas.enabled=yes", "dualmap.replicas.token=s3cret-0123456789",
					"dualmap.replicas.peers=http://127.0.0.1:1")
			.run(context -> assertThat(context).hasNotFailed().hasSingleBean(ReplicaSync.class));
		this.runner.withPropertyValues("dualmap.request-id.enabled=false")
			.run(context -> assertThat(context).doesNotHaveBean(RequestIdFilter.class));
		expectFailure("dualmap.stored-responses.enabled=maybe",
				"Failed to bind properties under 'dualmap.stored-responses.enabled'");
	}

	@Test
	void tenantSettingsAreCheckedWhetherTenantsAreOnOrNot() {
		expectFailure("dualmap.tenants.enabeld=true",
				"dualmap.tenants.enabeld is neither a setting of dualmap.tenants nor a tenant");
		expectFailure("dualmap.tenants.cost.promt-weight=5",
				"dualmap.tenants.cost.promt-weight is no setting of dualmap.tenants.cost (known: cached-prompt-weight, "
						+ "completion-weight, prompt-weight)");
		expectFailure("dualmap.tenants.redis.timeuot=1s", "dualmap.tenants.redis.timeuot is no setting of "
				+ "dualmap.tenants.redis (known: failure-mode, fairness-sync-interval, key-prefix, timeout)");
		expectFailure("dualmap.tenants.default.tokens-per-minit=5",
				"dualmap.tenants.default.tokens-per-minit is no tenant setting");
		expectFailure("dualmap.tenants.acme.wieght=2", "dualmap.tenants.acme.wieght is no tenant setting");
		expectFailure("dualmap.tenants.other.weight=2", "dualmap.tenants.other is no setting");
		expectFailure("dualmap.tenants.header.name=x-team", "dualmap.tenants.header is a single value, not a group");
		expectFailure("dualmap.tenants.mode=bogus", "dualmap.tenants.mode");
		expectFailure("dualmap.tenants.max-name-length=-5", "dualmap.tenants.max-name-length must be >= 1");
		expectFailure("dualmap.tenants.max-usage-body-size=0", "dualmap.tenants.max-usage-body-size must be > 0");
		expectFailure("dualmap.tenants.header=x tenant", "dualmap.tenants.header must be an HTTP header name");
		this.runner
			.withPropertyValues("dualmap.tenants.acme.weight=2", "dualmap.tenants.acme.models.m1.tokens-per-day=10",
					"dualmap.tenants.cost.prompt-weight=2", "dualmap.tenants.cost.cachedPromptWeight=0.5",
					"dualmap.tenants.redis.key-prefix=x:", "dualmap.tenants.default.tokens-per-minute=100",
					"dualmap.tenants.max-usage-body-size=64KB")
			.run(context -> assertThat(context).hasNotFailed());
	}

	@Test
	void aPeersLoadCountsForFourFlushesAndAtLeastASecondUnlessSetOtherwise() {
		ReplicasProperties replicas = new DualMapProperties().getReplicas();
		assertThat(replicas.isShareLoad()).isTrue();
		assertThat(replicas.effectiveLoadTtl()).isEqualTo(Duration.ofSeconds(1));
		replicas.setFlushInterval(Duration.ofMillis(400));
		assertThat(replicas.effectiveLoadTtl()).isEqualTo(Duration.ofMillis(1_600));
		replicas.setLoadTtl(Duration.ofMillis(500));
		assertThat(replicas.effectiveLoadTtl()).isEqualTo(Duration.ofMillis(500));
	}

	@Test
	void unknownKeysFailStartupNamingThem() {
		expectFailure("dualmap.dispatch.max-prefil-tokens=4096",
				"The elements [dualmap.dispatch.max-prefil-tokens] were left unbound");
		// A pool takes only some settings.
		expectFailure("dualmap.pools.llm.dispatch.max-wait=5s",
				"The elements [dualmap.pools.llm.dispatch.max-wait] were left unbound");
		expectFailure("dualmap.sloo.ttft=2s", "The elements [dualmap.sloo.ttft] were left unbound");
		expectFailure("dualmap.slo.classes.batch.tttf=60s",
				"The elements [dualmap.slo.classes.batch.tttf] were left unbound");
		// No class of the library binds the demo's properties (the exec jar's demo does).
		expectFailure("dualmap.demo.instances=2", "The elements [dualmap.demo.instances] were left unbound");
	}

	@Test
	void keysAnotherPropertiesClassBindsUnderDualMapAreThatClasssToCheck() {
		ApplicationContextRunner withExtension = this.runner.withUserConfiguration(ExtensionConfiguration.class);
		withExtension.withPropertyValues("dualmap.extension.level=3", "dualmap.extension.name=x").run(context -> {
			assertThat(context).hasNotFailed();
			assertThat(context.getBean(ExtensionProperties.class).level()).isEqualTo(3);
		});
		// The gateway's own keys are still checked, and the claim ends at its prefix.
		withExtension.withPropertyValues("dualmap.extension.level=3", "dualmap.sloo.ttft=2s")
			.run(context -> assertThat(failureMessages(context))
				.contains("The elements [dualmap.sloo.ttft] were left unbound"));
		withExtension.withPropertyValues("dualmap.extensions.level=3")
			.run(context -> assertThat(failureMessages(context))
				.contains("The elements [dualmap.extensions.level] were left unbound"));
		// The extension's own check still applies to its keys.
		withExtension.withPropertyValues("dualmap.extension.levle=3")
			.run(context -> assertThat(failureMessages(context))
				.contains("The elements [dualmap.extension.levle] were left unbound"));
	}

	/** An application's own properties under dualmap.*. */
	@ConfigurationProperties(prefix = "dualmap.extension", ignoreUnknownFields = false)
	record ExtensionProperties(int level, @Nullable String name) {
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(ExtensionProperties.class)
	static class ExtensionConfiguration {

	}

	@Test
	void theHotPrefixWindowMustHoldMinSamples() {
		expectFailure("dualmap.hot-prefix.window=10",
				"dualmap.hot-prefix.min-samples (default 20) must be <= dualmap.hot-prefix.window");
		expectFailure("dualmap.hot-prefix.min-samples=300",
				"dualmap.hot-prefix.min-samples (default 20) must be <= dualmap.hot-prefix.window");
		this.runner.withPropertyValues("dualmap.hot-prefix.window=5", "dualmap.hot-prefix.min-samples=5")
			.run(context -> assertThat(context.getBean(DualMapRegistry.class).settings().hotWindow()).isEqualTo(5));
	}

	@Test
	void replicaSyncBeansOnlyWhenEnabled() {
		this.runner.run(context -> assertThat(context).hasNotFailed()
			.doesNotHaveBean(ReplicaSync.class)
			.doesNotHaveBean(ReplicaPublisher.class));
		this.runner
			.withPropertyValues("dualmap.replicas.enabled=true", "dualmap.replicas.token=s3cret-0123456789",
					"dualmap.replicas.peers=http://127.0.0.1:1")
			.run(context -> {
				assertThat(context).hasNotFailed()
					.hasSingleBean(ReplicaSync.class)
					.hasSingleBean(ReplicaPublisher.class);
				assertThat(context.getBean(ReplicaSync.class).hashing())
					.isEqualTo("xxh3-chain;block-chars=256;chars-per-token=4.0;block-tokens=64");
				assertThat(context.getBean(ReplicaPublisher.class).bootstraps()).isTrue();
			});
		this.runner
			.withPropertyValues("dualmap.replicas.enabled=true", "dualmap.replicas.token=s3cret-0123456789",
					"dualmap.replicas.peers=http://127.0.0.1:1", "dualmap.replicas.bootstrap=false")
			.run(context -> assertThat(context.getBean(ReplicaPublisher.class).bootstraps()).isFalse());
	}

	private void expectFailure(String property, String message) {
		expectFailure(List.of(property), message);
	}

	private void expectFailure(List<String> properties, String message) {
		this.runner.withPropertyValues(properties.toArray(String[]::new))
			.run(context -> assertThat(failureMessages(context)).as(properties.toString()).contains(message));
	}

	/** The messages of the startup failure and its causes. */
	private static String failureMessages(AssertableApplicationContext context) {
		assertThat(context).hasFailed();
		StringBuilder all = new StringBuilder();
		for (Throwable t = context.getStartupFailure(); t != null; t = t.getCause()) {
			all.append(t.getMessage()).append('\n');
		}
		return all.toString();
	}

	/** The one binding validation error the startup failed with. */
	private static ObjectError validationError(AssertableApplicationContext context) {
		assertThat(context).hasFailed();
		BindValidationException invalid = (BindValidationException) NestedExceptionUtils
			.getMostSpecificCause(context.getStartupFailure());
		assertThat(invalid.getValidationErrors().getAllErrors()).hasSize(1);
		return invalid.getValidationErrors().getAllErrors().get(0);
	}

	@Test
	void unknownNamesAreRefusedNamingTheValueAndTheNamesKnown() {
		String known = "; known: " + String.join(", ", RoutingPolicies.names());
		expectFailure("dualmap.policy=Round-Robin",
				"dualmap.policy names no known routing policy: 'Round-Robin'" + known);
		expectFailure("dualmap.pools.llm.policy=Nope",
				"dualmap.pools.llm.policy names no known routing policy: 'Nope'" + known);
		expectFailure("dualmap.pools.llma.policy=least-loaded",
				"every key of dualmap.pools must be a service id listed in dualmap.services [llm]; not listed: llma");
		expectFailure("dualmap.scrape.services.lmm.path=/actuator/prometheus",
				"every key of dualmap.scrape.services must be a service id listed in dualmap.services [llm];"
						+ " not listed: lmm");
		this.runner.withPropertyValues("dualmap.scrape.services.llm.path=/actuator/prometheus")
			.run(context -> assertThat(context.getBean(DualMapProperties.class).getScrape().pathFor("llm"))
				.isEqualTo("/actuator/prometheus"));
		// The errors are the properties' own, so the startup failure report shows the
		// property, its value and where it was set (not "policyKnown", "false").
		this.runner.withPropertyValues("dualmap.policy=Round-Robin").run(context -> {
			FieldError error = (FieldError) validationError(context);
			assertThat(error.getObjectName() + "." + error.getField()).isEqualTo("dualmap.policy");
			assertThat(error.getRejectedValue()).isEqualTo("Round-Robin");
			assertThat(Origin.from(error)).isNotNull();
		});
		this.runner.withPropertyValues("dualmap.pools.llm.policy=Nope").run(context -> {
			FieldError error = (FieldError) validationError(context);
			assertThat(error.getField()).isEqualTo("pools[llm].policy");
			assertThat(error.getRejectedValue()).isEqualTo("Nope");
		});
		// A key from an environment variable is named as the gateway reads it.
		this.runner
			.withInitializer(context -> context.getEnvironment()
				.getPropertySources()
				.addFirst(new SystemEnvironmentPropertySource(
						"test-" + StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
						Map.of("DUALMAP_POOLS_LLMA_POLICY", "least-loaded"))))
			.run(context -> assertThat(failureMessages(context)).contains("not listed: llma"));
		// A value is shown as written, not read as a message template.
		expectFailure("dualmap.policy=a{b}$c\\d", "no known routing policy: 'a{b}$c\\d'");
	}

	@Test
	@ExtendWith(OutputCaptureExtension.class)
	void anUnresolvedTokenPlaceholderIsNamedWithoutAnExpressionLanguageWarning(CapturedOutput output) {
		expectFailure(List.of("dualmap.replicas.enabled=true", "dualmap.replicas.token=${DUALMAP_NO_SUCH_VARIABLE}"),
				"dualmap.replicas.token is an unresolved ${...} placeholder; set the variable it names");
		// Hibernate Validator read ${...} in the message as an EL expression and logged
		// a long warning that it does not parse before the failure.
		assertThat(output).doesNotContain("HV000130").doesNotContain("ELException");
	}

	@Test
	void storedResponsesAreRememberedByDefaultWithinBoundsAndCanBeSwitchedOff() {
		this.runner.run(context -> {
			StoredResponsesProperties p = context.getBean(DualMapProperties.class).getStoredResponses();
			assertThat(p.getMaxEntries()).isEqualTo(100_000);
			assertThat(p.getTtl()).isEqualTo(Duration.ofHours(1));
			assertThat(context).hasSingleBean(StoredResponses.class);
		});
		this.runner.withPropertyValues("dualmap.stored-responses.enabled=false")
			.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(StoredResponses.class));
		expectFailure("dualmap.stored-responses.max-entries=0", "dualmap.stored-responses.max-entries must be >= 1");
		expectFailure("dualmap.stored-responses.ttl=0s", "dualmap.stored-responses.ttl must be > 0");
	}

	@Test
	void refusalsOf429And503AreRetriedByDefaultAndOnlyErrorStatusesCanBeListed() {
		this.runner.run(context -> assertThat(context.getBean(DualMapProperties.class).getRetry().getStatuses())
			.containsExactly(429, 503));
		this.runner.withPropertyValues("dualmap.retry.statuses=")
			.run(context -> assertThat(context.getBean(DualMapProperties.class).getRetry().getStatuses()).isEmpty());
		this.runner.withPropertyValues("dualmap.retry.statuses=502,503")
			.run(context -> assertThat(context.getBean(DualMapProperties.class).getRetry().getStatuses())
				.containsExactly(502, 503));
		expectFailure("dualmap.retry.statuses=503,200", "dualmap.retry.statuses must be HTTP error statuses");
	}

	@Test
	void aPoolOverridesPolicySloAndDispatchForItsServiceOnly() {
		this.runner
			.withPropertyValues("dualmap.services=llm,big", "dualmap.slo.ttft=3s", "dualmap.dispatch.aging=1s",
					"dualmap.pools.big.policy=least-loaded", "dualmap.pools.big.slo.ttft=12s",
					"dualmap.pools.big.dispatch.mode=pass-through", "dualmap.pools.big.dispatch.max-prefill-requests=4",
					"dualmap.pools.big.dispatch.max-prefill-tokens=8192",
					"dualmap.pools.big.dispatch.count-queued-prefixes=false")
			.run(context -> {
				DualMapRegistry registry = context.getBean(DualMapRegistry.class);
				ServicePool llm = registry.service("llm");
				ServicePool big = registry.service("big");
				assertThat(llm.policyName()).isEqualTo("dualmap");
				assertThat(llm.instancePool().settings()).isEqualTo(registry.settings());
				assertThat(llm.queues().settings()).isEqualTo(registry.queueSettings());
				assertThat(big.policyName()).isEqualTo("least-loaded");
				assertThat(big.instancePool().settings().defaultSloNanos()).isEqualTo(Duration.ofSeconds(12).toNanos());
				QueueSettings q = big.queues().settings();
				assertThat(q.mode()).isEqualTo(DispatchMode.PASS_THROUGH);
				assertThat(q.maxPrefillRequests()).isEqualTo(4);
				assertThat(q.maxPrefillTokens()).isEqualTo(8192);
				assertThat(q.countQueuedPrefixes()).isFalse();
				assertThat(llm.queues().settings().countQueuedPrefixes()).isTrue();
				// What the pool does not set is the global value.
				assertThat(q.agingNanos()).isEqualTo(Duration.ofSeconds(1).toNanos());
				assertThat(big.instancePool().settings().switchFactor()).isEqualTo(registry.settings().switchFactor());
				// The global view is unchanged.
				assertThat(registry.policyName()).isEqualTo("dualmap");
				assertThat(registry.settings().defaultSloNanos()).isEqualTo(Duration.ofSeconds(3).toNanos());
				assertThat(registry.queueSettings().mode()).isEqualTo(DispatchMode.QUEUE);
			});
		expectFailure("dualmap.pools.other.policy=least-loaded",
				"every key of dualmap.pools must be a service id listed in dualmap.services [llm]; not listed: other");
		expectFailure("dualmap.pools.llm.policy=no-such-policy",
				"dualmap.pools.llm.policy names no known routing policy: 'no-such-policy'");
		expectFailure("dualmap.pools.llm.slo.ttft=0s", "dualmap.pools.<service>.slo.ttft must be > 0");
		expectFailure("dualmap.pools.llm.dispatch.max-prefill-tokens=0",
				"dualmap.pools.<service>.dispatch.max-prefill-tokens must be >= 1");
		expectFailure("dualmap.pools.llm.dispatch.mode=later", "dualmap.pools.llm.dispatch.mode");
	}

	@Test
	void theBodyBudgetIsAQuarterOfTheHeapButAtLeastOneBodyUnlessSet() {
		this.runner.run(context -> {
			DualMapProperties p = context.getBean(DualMapProperties.class);
			assertThat(p.maxBufferedBytes(4L << 30)).isEqualTo(1L << 30);
			// A small heap still takes one body of max-body-size (32 MB).
			assertThat(p.maxBufferedBytes(64L << 20)).isEqualTo(32L << 20);
			assertThat(context.getBean(RequestBuffers.class).limit())
				.isEqualTo(Math.max(Runtime.getRuntime().maxMemory() / 4, 32L << 20));
		});
		this.runner.withPropertyValues("dualmap.max-buffered-size=200MB")
			.run(context -> assertThat(context.getBean(RequestBuffers.class).limit()).isEqualTo(200L << 20));
		expectFailure("dualmap.max-buffered-size=1MB", "dualmap.max-buffered-size must be >= dualmap.max-body-size");
		// A peer's publication must fit too, or it would be refused every time.
		this.runner
			.withPropertyValues("dualmap.replicas.enabled=true", "dualmap.replicas.token=t0123456789abcdef",
					"dualmap.replicas.peers=http://127.0.0.1:1", "dualmap.max-buffered-size=40MB",
					"dualmap.replicas.max-body-size=64MB")
			.run(context -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("dualmap.replicas.max-body-size with replica sync on"));
		assertThat(new DualMapProperties().maxBufferedBytes(64L << 20)).isEqualTo(32L << 20);
	}

	@Test
	void requestIdsAreOnByDefaultOnAValidHeaderAndCanBeSwitchedOff() {
		this.runner.run(context -> {
			assertThat(context).hasSingleBean(RequestIdFilter.class);
			assertThat(context.getBean(DualMapProperties.class).getRequestId().getHeader()).isEqualTo("x-request-id");
		});
		this.runner.withPropertyValues("dualmap.request-id.enabled=false")
			.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RequestIdFilter.class));
		expectFailure("dualmap.request-id.header=x request id",
				"dualmap.request-id.header must be an HTTP header name");
	}

	@Test
	void theModelListDefaultsAreProperties() {
		this.runner.run(context -> {
			ModelListProperties m = context.getBean(DualMapProperties.class).getModelList();
			assertThat(m.getPath()).isEqualTo("/v1/models");
			assertThat(m.getTimeout()).isEqualTo(Duration.ofSeconds(2));
			assertThat(m.getCacheTtl()).isEqualTo(Duration.ofSeconds(5));
			assertThat(m.getOtherServices()).isEmpty();
		});
		this.runner
			.withPropertyValues("dualmap.model-list.timeout=5s", "dualmap.model-list.cache-ttl=0s",
					"dualmap.model-list.other-services=whisper")
			.run(context -> {
				ModelListProperties m = context.getBean(DualMapProperties.class).getModelList();
				assertThat(m.getTimeout()).isEqualTo(Duration.ofSeconds(5));
				assertThat(m.getCacheTtl()).isZero();
				assertThat(m.getOtherServices()).containsExactly("whisper");
			});
		expectFailure("dualmap.model-list.timeout=0s", "dualmap.model-list.timeout must be > 0 and cache-ttl >= 0");
		expectFailure("dualmap.model-list.path=v1/models", "dualmap.model-list.path must start with /");
		expectFailure("dualmap.model-list.other-services=llm",
				"dualmap.model-list.other-services must not name a service of dualmap.services");
	}

	@Test
	void theClassHeaderMustBeAnHttpHeaderName() {
		expectFailure("dualmap.slo.class-header=bad header", "dualmap.slo.class-header must be an HTTP header name");
		expectFailure("dualmap.slo.class-header=x-slo:class", "dualmap.slo.class-header must be an HTTP header name");
		this.runner.withPropertyValues("dualmap.slo.class-header=X-Priority_Class")
			.run(context -> assertThat(context).hasNotFailed());
	}

	@Test
	void aClassWaitBoundMustBePositive() {
		expectFailure("dualmap.slo.classes.interactive.max-wait=0s", "dualmap.slo.classes.<name>.max-wait must be > 0");
	}

	@Test
	void disabledMeansNoBeans() {
		this.runner.withPropertyValues("dualmap.enabled=false")
			.run(context -> assertThat(context).doesNotHaveBean(DualMapRegistry.class));
	}

}
