package io.github.dualmap.engine;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.withinPercentage;

class EngineProfileTests {

	private static final double GIB = 1024.0 * 1024 * 1024;

	@Test
	void theDefaultProfileHoldsTheKvOfVllmsDefaultDeploymentOfAn8bModelOnAnH100() {
		// 0.9 of an 80 GB H100's 79.6 GiB, less 15.0 GiB of bf16 weights (8.03 B x 2
		// bytes) and 2.9 GiB of activation peak, CUDA graphs and non-torch memory.
		double kvBytes = 0.9 * 79.6 * GIB - 8.03e9 * 2 - 2.9 * GIB;
		// 32 layers x K and V x 8 KV heads x 128 x 2 bytes.
		double bytesPerToken = 32 * 2 * 8 * 128 * 2;
		assertThat(bytesPerToken).isEqualTo(128 * 1024);
		assertThat(EngineProfile.h100_8b().kvCapacityTokens()).isEqualTo(440_000)
			.isCloseTo((long) (kvBytes / bytesPerToken), withinPercentage(1));
		assertThat(EngineProfile.named(EngineProfile.DEFAULT)).isEqualTo(EngineProfile.h100_8b());
		assertThat(EngineProfile.h100_8b().kvCapacityTokens() % EngineProfile.h100_8b().blockTokens()).isZero();
	}

	@Test
	void theFp8ProfileHoldsTwiceTheTokensWithTheSameStepCosts() {
		EngineProfile fp8 = EngineProfile.named("h100-8b-fp8");
		assertThat(fp8.kvCapacityTokens()).isEqualTo(900_000);
		assertThat(fp8.name()).isEqualTo("h100-8b-fp8");
		assertThat(fp8.withKvCapacityTokens(440_000)).usingRecursiveComparison()
			.ignoringFields("name")
			.isEqualTo(EngineProfile.h100_8b());
		assertThat(EngineProfile.named("a100-8b").kvCapacityTokens()).isEqualTo(440_000);
		assertThatThrownBy(() -> EngineProfile.named("h100")).hasMessageContaining("h100-8b, h100-8b-fp8, a100-8b");
	}

	@Test
	void idleTtftComputesOnlyTheUncachedTokens() {
		EngineProfile p = EngineProfile.h100_8b();
		assertThat(p.idleTtftSeconds(20_000, 0)).isEqualTo(p.coldTtftSeconds(20_000));
		// 4,000 uncached tokens after 16,000 cached: one step attending to all before.
		assertThat(p.idleTtftSeconds(20_000, 16_000)).isEqualTo(p.stepSeconds(4_000, 4_000 * (16_000 + 2_000.0), 0));
		assertThat(p.idleTtftSeconds(100, 100)).isZero();
	}

}
