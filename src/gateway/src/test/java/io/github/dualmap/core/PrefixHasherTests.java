package io.github.dualmap.core;

import java.util.Arrays;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class PrefixHasherTests {

	private final PrefixHasher hasher = new PrefixHasher(8, 4.0, 4);

	@Test
	void defaultsAreDocumentedValues() {
		PrefixHasher d = PrefixHasher.ofDefaults();
		assertThat(d.blockChars()).isEqualTo(256);
		assertThat(d.charsPerToken()).isEqualTo(4.0);
		assertThat(d.blockTokens()).isEqualTo(64);
		assertThat(d.textBlockTokens()).isEqualTo(64);
	}

	@Test
	void textBlocksWithPartialLastBlock() {
		PromptBlocks b = hasher.ofText("m", "aaaaaaaabbbbbbbbccc");
		assertThat(b.depth()).isEqualTo(3);
		assertThat(b.blockTokens()).isEqualTo(2);
		assertThat(b.promptTokens()).isEqualTo(5); // ceil(19 / 4)
		PromptBlocks longer = hasher.ofText("m", "aaaaaaaabbbbbbbbcccd");
		assertThat(longer.chain()[1]).isEqualTo(b.chain()[1]);
		assertThat(longer.chain()[2]).isNotEqualTo(b.chain()[2]);
	}

	@Property
	void equalPrefixesGiveEqualChainPrefixes(@ForAll @StringLength(max = 80) String prefix,
			@ForAll @StringLength(max = 40) String tailA, @ForAll @StringLength(max = 40) String tailB) {
		PromptBlocks a = hasher.ofText("m", prefix + tailA);
		PromptBlocks b = hasher.ofText("m", prefix + tailB);
		int full = prefix.length() / 8;
		for (int i = 0; i < full; i++) {
			assertThat(a.chain()[i]).isEqualTo(b.chain()[i]);
		}
	}

	@Property
	void oneDifferingBlockChangesEveryLaterHash(@ForAll @IntRange(min = 0, max = 5) int changed) {
		StringBuilder text = new StringBuilder("x".repeat(48));
		PromptBlocks a = hasher.ofText("m", text);
		text.setCharAt(changed * 8 + 3, 'y');
		PromptBlocks b = hasher.ofText("m", text);
		for (int i = 0; i < 6; i++) {
			if (i < changed) {
				assertThat(b.chain()[i]).isEqualTo(a.chain()[i]);
			}
			else {
				assertThat(b.chain()[i]).as("block %d", i).isNotEqualTo(a.chain()[i]);
			}
		}
	}

	@Test
	void stringBuilderAndStringHashAlike() {
		String text = "the quick brown fox jumps over the lazy dog";
		assertThat(hasher.ofText("m", new StringBuilder(text))).isEqualTo(hasher.ofText("m", text));
		CharSequence other = java.nio.CharBuffer.wrap(text);
		assertThat(hasher.ofText("m", other)).isEqualTo(hasher.ofText("m", text));
	}

	@Test
	void modelNameChangesEveryHash() {
		String text = "z".repeat(40);
		long[] a = hasher.ofText("llama", text).chain();
		long[] b = hasher.ofText("qwen", text).chain();
		for (int i = 0; i < a.length; i++) {
			assertThat(a[i]).isNotEqualTo(b[i]);
		}
		long[] ids = { 1, 2, 3 };
		long[] ha = hasher.ofHashIds("llama", ids, 512, 1500).chain();
		long[] hb = hasher.ofHashIds("qwen", ids, 512, 1500).chain();
		for (int i = 0; i < ha.length; i++) {
			assertThat(ha[i]).isNotEqualTo(hb[i]);
		}
	}

	@Test
	void tokenBlocks() {
		int[] ids = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
		PromptBlocks b = hasher.ofTokens("m", ids);
		assertThat(b.depth()).isEqualTo(3);
		assertThat(b.blockTokens()).isEqualTo(4);
		assertThat(b.promptTokens()).isEqualTo(10);
		int[] other = ids.clone();
		other[5] = 99;
		PromptBlocks c = hasher.ofTokens("m", other);
		assertThat(c.chain()[0]).isEqualTo(b.chain()[0]);
		assertThat(c.chain()[1]).isNotEqualTo(b.chain()[1]);
		assertThat(c.chain()[2]).isNotEqualTo(b.chain()[2]);
		assertThat(hasher.ofTokens("m", Arrays.copyOf(ids, 8)).chain()).containsExactly(b.chain()[0], b.chain()[1]);
	}

	@Test
	void hashIdsAreChained() {
		PromptBlocks a = hasher.ofHashIds("m", new long[] { 7, 8, 9 }, 512, 1400);
		PromptBlocks b = hasher.ofHashIds("m", new long[] { 7, 5, 9 }, 512, 1400);
		assertThat(a.depth()).isEqualTo(3);
		assertThat(a.blockTokens()).isEqualTo(512);
		assertThat(a.promptTokens()).isEqualTo(1400);
		assertThat(b.chain()[0]).isEqualTo(a.chain()[0]);
		// The same id after a different parent is a different block.
		assertThat(b.chain()[2]).isNotEqualTo(a.chain()[2]);
	}

	@Test
	void emptyPromptsAreOneBlock() {
		PromptBlocks text = hasher.ofText("m", "");
		PromptBlocks tokens = hasher.ofTokens("m", new int[0]);
		PromptBlocks ids = hasher.ofHashIds("m", new long[0], 512, 0);
		assertThat(text.depth()).isEqualTo(1);
		assertThat(text.promptTokens()).isZero();
		assertThat(tokens.depth()).isEqualTo(1);
		assertThat(ids.depth()).isEqualTo(1);
		assertThat(text.chain()).isEqualTo(hasher.ofText("m", "").chain());
		assertThat(text.chain()[0]).isNotEqualTo(hasher.ofText("other", "").chain()[0]);
		// Empty id lists of one model share a key; of two models they do not.
		assertThat(ids.chain()).isEqualTo(hasher.ofHashIds("m", new long[0], 512, 0).chain());
		assertThat(ids.chain()[0]).isNotEqualTo(hasher.ofHashIds("other", new long[0], 512, 0).chain()[0]);
	}

	@Test
	void theSmallestValidArgumentsAreAccepted() {
		PrefixHasher smallest = new PrefixHasher(1, 1, 1);
		assertThat(smallest.textBlockTokens()).isEqualTo(1);
		// 2 characters at 4 per token round to 1 token a block.
		assertThat(new PrefixHasher(2, 4, 64).textBlockTokens()).isEqualTo(1);
		assertThat(smallest.ofHashIds("m", new long[] { 1 }, 1, 0).promptTokens()).isZero();
		assertThat(new PromptBlocks(new long[] { 1 }, 1, 0).blockTokens()).isEqualTo(1);
		assertThat(new ShadowKvIndex(1).capacityBlocks()).isEqualTo(1);
		assertThatIllegalArgumentException().isThrownBy(() -> new PrefixHasher(256, 0, 64))
			.withMessageContaining("charsPerToken");
		assertThatIllegalArgumentException().isThrownBy(() -> new PrefixHasher(256, Double.POSITIVE_INFINITY, 64))
			.withMessageContaining("charsPerToken");
		assertThatIllegalArgumentException().isThrownBy(() -> new PrefixHasher(256, 4, 0))
			.withMessageContaining("blockTokens");
		assertThatIllegalArgumentException().isThrownBy(() -> new PromptBlocks(new long[] { 1 }, 0, 10))
			.withMessageContaining("blockTokens");
		assertThatIllegalArgumentException().isThrownBy(() -> new ShadowKvIndex(0)).withMessageContaining("0");
	}

	@Test
	void promptBlocksAreEqualByValue() {
		PromptBlocks p = new PromptBlocks(new long[] { 1, 2 }, 64, 100);
		PromptBlocks same = new PromptBlocks(new long[] { 1, 2 }, 64, 100);
		assertThat(p).isEqualTo(same).hasSameHashCodeAs(same);
		assertThat(p).isNotEqualTo(new PromptBlocks(new long[] { 1, 3 }, 64, 100))
			.isNotEqualTo(new PromptBlocks(new long[] { 1, 2 }, 32, 100))
			.isNotEqualTo(new PromptBlocks(new long[] { 1, 2 }, 64, 99))
			.isNotEqualTo("PromptBlocks");
	}

	@Test
	void validationNamesTheBadArgument() {
		assertThatIllegalArgumentException().isThrownBy(() -> new PrefixHasher(0, 4, 64))
			.withMessageContaining("blockChars")
			.withMessageContaining("0");
		assertThatIllegalArgumentException().isThrownBy(() -> new PrefixHasher(256, Double.NaN, 64))
			.withMessageContaining("charsPerToken")
			.withMessageContaining("NaN");
		assertThatIllegalArgumentException().isThrownBy(() -> new PrefixHasher(256, 4, -1))
			.withMessageContaining("blockTokens")
			.withMessageContaining("-1");
		assertThatIllegalArgumentException().isThrownBy(() -> new PrefixHasher(1, 4, 64))
			.withMessageContaining("charsPerToken=4.0");
		assertThatIllegalArgumentException().isThrownBy(() -> hasher.ofHashIds("m", new long[] { 1 }, 0, 10))
			.withMessageContaining("tokensPerId");
		assertThatIllegalArgumentException().isThrownBy(() -> hasher.ofHashIds("m", new long[] { 1 }, 512, -3))
			.withMessageContaining("promptTokens")
			.withMessageContaining("-3");
	}

}
