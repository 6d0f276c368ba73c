package io.github.dualmap.autoconfigure;

import java.time.Duration;

import io.github.dualmap.core.DispatchMode;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.SchedulerSettings;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The properties map to the core's settings: the defaults to the core's defaults, and a
 * pool's overrides over the global values, the rest global.
 */
class CoreSettingsMapperTests {

	@Test
	void theDefaultsAreTheCoresDefaults() {
		CoreSettingsMapper mapper = new CoreSettingsMapper(new DualMapProperties());
		assertThat(mapper.schedulerSettings()).isEqualTo(SchedulerSettings.ofDefaults());
		assertThat(mapper.queueSettings()).isEqualTo(QueueSettings.ofDefaults());
		assertThat(mapper.schedulerSettings("llm")).isEqualTo(SchedulerSettings.ofDefaults());
		assertThat(mapper.queueSettings("llm")).isEqualTo(QueueSettings.ofDefaults());
		assertThat(mapper.policyOf("llm")).isEqualTo(DualMapProperties.DEFAULT_POLICY);
		assertThat(mapper.sloTtfts()).containsExactly(SchedulerSettings.DEFAULT_SLO);
	}

	@Test
	void aPoolsOverridesApplyToItsPoolOnly() {
		DualMapProperties properties = new DualMapProperties();
		properties.setPolicy("round-robin");
		properties.getDispatch().setMaxPrefillTokens(4096);
		properties.getDispatch().setMaxWait(Duration.ofSeconds(7));
		properties.getHotPrefix().setMaxDepth(8);
		PoolProperties chat = new PoolProperties();
		chat.setPolicy("dualmap");
		chat.getSlo().setTtft(Duration.ofSeconds(2));
		chat.getDispatch().setMode(DispatchMode.PASS_THROUGH);
		chat.getDispatch().setMaxPrefillRequests(4);
		chat.getDispatch().setCountQueuedPrefixes(false);
		properties.getPools().put("chat", chat);
		CoreSettingsMapper mapper = new CoreSettingsMapper(properties);

		assertThat(mapper.policyOf("chat")).isEqualTo("dualmap");
		assertThat(mapper.policyOf("batch")).isEqualTo("round-robin");
		assertThat(mapper.schedulerSettings("chat").defaultSloNanos()).isEqualTo(Duration.ofSeconds(2).toNanos());
		assertThat(mapper.schedulerSettings("chat").maxPrefixDepth()).isEqualTo(8);
		assertThat(mapper.schedulerSettings("batch").defaultSloNanos())
			.isEqualTo(SchedulerSettings.DEFAULT_SLO.toNanos());
		QueueSettings chatQueues = mapper.queueSettings("chat");
		assertThat(chatQueues.mode()).isEqualTo(DispatchMode.PASS_THROUGH);
		assertThat(chatQueues.maxPrefillRequests()).isEqualTo(4);
		assertThat(chatQueues.maxPrefillTokens()).isEqualTo(4096);
		assertThat(chatQueues.countQueuedPrefixes()).isFalse();
		assertThat(mapper.queueSettings("batch").countQueuedPrefixes()).isTrue();
		assertThat(chatQueues.maxWaitNanos()).isEqualTo(Duration.ofSeconds(7).toNanos());
		assertThat(mapper.queueSettings("batch")).isEqualTo(mapper.queueSettings());
		assertThat(mapper.queueSettings().mode()).isEqualTo(DispatchMode.QUEUE);
	}

	@Test
	void everyTtftObjectiveConfiguredIsListed() {
		DualMapProperties properties = new DualMapProperties();
		SloProperties.SloClass batch = new SloProperties.SloClass();
		batch.setTtft(Duration.ofSeconds(60));
		properties.getSlo().getClasses().put("batch", batch);
		PoolProperties chat = new PoolProperties();
		chat.getSlo().setTtft(Duration.ofSeconds(2));
		properties.getPools().put("chat", chat);
		properties.getPools().put("other", new PoolProperties());
		assertThat(new CoreSettingsMapper(properties).sloTtfts()).containsExactly(Duration.ofSeconds(5),
				Duration.ofSeconds(60), Duration.ofSeconds(2));
	}

}
