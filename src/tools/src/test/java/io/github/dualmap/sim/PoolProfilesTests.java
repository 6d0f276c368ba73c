package io.github.dualmap.sim;

import java.util.List;

import io.github.dualmap.engine.EngineProfile;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PoolProfilesTests {

	@Test
	void aNameAloneIsEveryInstanceOfThatProfile() {
		PoolProfiles pool = PoolProfiles.parse("a100-8b", 3);
		assertThat(pool.mixed()).isFalse();
		assertThat(pool.name()).isEqualTo("a100-8b");
		assertThat(List.of(pool.profileOf(0), pool.profileOf(2), pool.profileOf(7)))
			.allSatisfy(p -> assertThat(p).isEqualTo(EngineProfile.a100_8b()));
		// One entry with its count is the same pool.
		assertThat(PoolProfiles.parse("a100-8b:3", 3).mixed()).isFalse();
	}

	@Test
	void aMixLaysOutItsProfilesInTheOrderGivenAndStartsAgainForInstancesThatJoinLater() {
		PoolProfiles pool = PoolProfiles.parse(" h100-8b:2, a100-8b:1 ", 3);
		assertThat(pool.mixed()).isTrue();
		assertThat(pool.name()).isEqualTo("h100-8b:2,a100-8b:1");
		assertThat(pool.size()).isEqualTo(3);
		assertThat(List.of(0, 1, 2, 3, 4, 5).stream().map(k -> pool.profileOf(k).name())).containsExactly("h100-8b",
				"h100-8b", "a100-8b", "h100-8b", "h100-8b", "a100-8b");
		assertThat(pool.first()).isEqualTo(EngineProfile.h100_8b());
		assertThat(pool.largestKvCapacityTokens()).isEqualTo(EngineProfile.KV_TOKENS_16BIT);
		assertThat(PoolProfiles.parse("h100-8b-fp8:1,a100-8b:1", 2).largestKvCapacityTokens())
			.isEqualTo(EngineProfile.KV_TOKENS_FP8);
		// A change applies to every profile and keeps the counts.
		PoolProfiles jittered = pool.map(p -> p.withJitter(0.02, 7));
		assertThat(jittered.profiles()).allSatisfy(p -> assertThat(p.jitter()).isEqualTo(0.02));
		assertThat(jittered.counts()).containsExactly(2, 1);
	}

	@Test
	void anEntryMayGiveItsInstancesARingWeight() {
		PoolProfiles pool = PoolProfiles.parse("h100-8b:2:2.5,a100-8b:1", 3);
		assertThat(List.of(pool.weightOf(0), pool.weightOf(1), pool.weightOf(2), pool.weightOf(3))).containsExactly(2.5,
				2.5, 1.0, 2.5);
		assertThat(pool.name()).isEqualTo("h100-8b:2:2.5,a100-8b:1");
		assertThat(PoolProfiles.parse("h100-8b:2:3,a100-8b:1", 3).name()).isEqualTo("h100-8b:2:3,a100-8b:1");
		assertThat(PoolProfiles.parse("h100-8b", 3).weightOf(1)).isEqualTo(1.0);
		InstanceModel.Factory factory = EngineInstance.factory(pool, 512);
		assertThat(factory.create(0, 1).ringWeight()).isEqualTo(2.5);
		assertThat(factory.create(2, 1).ringWeight()).isEqualTo(1.0);
		assertThatThrownBy(() -> PoolProfiles.parse("h100-8b:2:0,a100-8b:1", 3))
			.hasMessage("--profile: the weight of h100-8b must be a number above 0 and at most 100.0 but was '0'");
		assertThatThrownBy(() -> PoolProfiles.parse("h100-8b:2:heavy,a100-8b:1", 3))
			.hasMessageContaining("the weight of h100-8b must be a number above 0");
		assertThatThrownBy(() -> PoolProfiles.parse("h100-8b:2:101,a100-8b:1", 3))
			.hasMessageContaining("at most 100.0 but was '101'");
		assertThatThrownBy(() -> PoolProfiles.parse("h100-8b:2:1:1,a100-8b:1", 3))
			.hasMessageContaining("NAME:COUNT[:WEIGHT]");
	}

	@Test
	void aMixThatIsNotThePoolIsRefusedWithWhatIsWrong() {
		assertThatThrownBy(() -> PoolProfiles.parse("h100-8b:4,a100-8b:3", 8))
			.hasMessage("--profile h100-8b:4,a100-8b:3 makes a pool of 7 instances, but --instances is 8");
		assertThatThrownBy(() -> PoolProfiles.parse("h100-8b:4,a100-8b", 8))
			.hasMessageContaining("NAME:COUNT[:WEIGHT] entries separated by commas")
			.hasMessageContaining("'a100-8b'");
		assertThatThrownBy(() -> PoolProfiles.parse("h100-8b:4,a100-8b:x", 8))
			.hasMessage("--profile: the count of a100-8b must be a whole number but was 'x'");
		assertThatThrownBy(() -> PoolProfiles.parse("h100-8b:8,a100-8b:0", 8))
			.hasMessage("--profile: the count of a100-8b must be > 0 but was 0");
		assertThatThrownBy(() -> PoolProfiles.parse("h100-8b:4,h100-8b:4", 8))
			.hasMessage("--profile names 'h100-8b' twice");
		assertThatThrownBy(() -> PoolProfiles.parse("h100-8b:4,b200:4", 8))
			.hasMessageContaining("unknown engine profile 'b200'");
		assertThatThrownBy(() -> PoolProfiles.parse("h100-8b:4,", 4)).hasMessageContaining("''");
	}

	@Test
	void theProfilesOfAPoolShareTheirBlockSize() {
		EngineProfile h = EngineProfile.h100_8b();
		EngineProfile bigBlocks = new EngineProfile("big-blocks", h.t0Seconds(), h.cLinSeconds(), h.attentionFlops(),
				h.layers(), h.hidden(), h.cKvSeconds(), h.tokenBudget(), h.maxRunningSeqs(), 32, h.kvCapacityTokens(),
				h.maxModelLen(), 0, 0, 0);
		assertThatThrownBy(() -> new PoolProfiles(List.of(h, bigBlocks), List.of(1, 1), List.of(1.0, 1.0)))
			.hasMessageContaining("must share their KV block size");
	}

	@Test
	void eachInstanceRunsItsOwnProfile() {
		InstanceModel.Factory factory = EngineInstance.factory(PoolProfiles.parse("h100-8b:1,a100-8b:1", 2), 512);
		assertThat(((EngineInstance) factory.create(0, 1)).profile().name()).isEqualTo("h100-8b");
		assertThat(((EngineInstance) factory.create(1, 2)).profile().name()).isEqualTo("a100-8b");
		assertThat(((EngineInstance) factory.create(3, 3)).profile().name()).isEqualTo("a100-8b");
	}

}
