package io.github.dualmap.engine;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class BlockChainsTests {

	@Test
	void equalTokenPrefixesGiveEqualChainPrefixes() {
		int[] a = new int[100];
		int[] b = new int[100];
		for (int i = 0; i < 100; i++) {
			a[i] = i;
			b[i] = i < 40 ? i : -i;
		}
		long[] ca = BlockChains.ofTokens(a, 16);
		long[] cb = BlockChains.ofTokens(b, 16);
		// only the 6 full blocks are hashed
		assertThat(ca).hasSize(6);
		assertThat(cb[0]).isEqualTo(ca[0]);
		assertThat(cb[1]).isEqualTo(ca[1]);
		assertThat(cb[2]).isNotEqualTo(ca[2]);
		assertThat(cb[5]).isNotEqualTo(ca[5]);
	}

	@Test
	void aCacheSaltChangesEveryBlockAndEqualSaltsAgree() {
		int[] tokens = new int[64];
		for (int i = 0; i < tokens.length; i++) {
			tokens[i] = i * 7;
		}
		long[] plain = BlockChains.ofTokens(tokens, 16);
		long[] a = BlockChains.ofTokens(tokens, 16, "tenant-a");
		assertThat(BlockChains.ofTokens(tokens, 16, null)).isEqualTo(plain);
		assertThat(BlockChains.ofTokens(tokens, 16, "tenant-a")).isEqualTo(a);
		long[] b = BlockChains.ofTokens(tokens, 16, "tenant-b");
		for (int i = 0; i < plain.length; i++) {
			assertThat(a[i]).isNotEqualTo(plain[i]).isNotEqualTo(b[i]);
		}
	}

	@Test
	void hashIdsExpandIntoEngineBlocksDeterministically() {
		HashIdExpander expander = new HashIdExpander(512, 16);
		long[] x = expander.expand(new long[] { 7, 8, 9 }, 1100);
		long[] y = expander.expand(new long[] { 7, 8, 10 }, 1100);
		long[] z = expander.expand(new long[] { 6, 8, 9 }, 1100);
		assertThat(x).hasSize(1100 / 16).isEqualTo(expander.expand(new long[] { 7, 8, 9 }, 1100));
		for (int i = 0; i < 64; i++) {
			assertThat(y[i]).isEqualTo(x[i]);
		}
		assertThat(y[64]).isNotEqualTo(x[64]);
		// a different first id changes every block after it, even with equal later ids
		assertThat(z[32]).isNotEqualTo(x[32]);
		assertThat(new java.util.HashSet<>(java.util.Arrays.stream(x).boxed().toList())).hasSize(x.length);
	}

	@Test
	void hashIdsMustCoverThePrompt() {
		assertThatIllegalArgumentException().isThrownBy(() -> new HashIdExpander(512, 16).expand(new long[] { 1 }, 600))
			.withMessageContaining("600");
		assertThatIllegalArgumentException().isThrownBy(() -> new HashIdExpander(500, 16)).withMessageContaining("500");
	}

}
