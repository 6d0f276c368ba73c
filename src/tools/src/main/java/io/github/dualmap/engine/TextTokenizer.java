package io.github.dualmap.engine;

import net.openhft.hashing.LongHashFunction;

/**
 * A deterministic stand-in for a real tokenizer: every {@value #CHARS_PER_TOKEN}
 * characters make one token whose id is a hash of the chunk modulo the vocabulary. Equal
 * text prefixes give equal token prefixes (up to the last partial chunk), which is all
 * prefix caching needs; roughly four characters per token matches English text under
 * Llama-3's tokenizer.
 */
public final class TextTokenizer {

	/** Characters per token. */
	public static final int CHARS_PER_TOKEN = 4;

	/** Llama-3 vocabulary size. */
	public static final int VOCAB_SIZE = 128_256;

	private static final LongHashFunction HASH = LongHashFunction.xx3(0x70C3L);

	private TextTokenizer() {
	}

	public static int[] encode(CharSequence input) {
		String text = input.toString();
		int n = tokenCount(text);
		int[] ids = new int[n];
		for (int i = 0; i < n; i++) {
			int off = i * CHARS_PER_TOKEN;
			int len = Math.min(CHARS_PER_TOKEN, text.length() - off);
			ids[i] = (int) Math.floorMod(HASH.hashChars(text, off, len), (long) VOCAB_SIZE);
		}
		return ids;
	}

	public static int tokenCount(CharSequence text) {
		return (text.length() + CHARS_PER_TOKEN - 1) / CHARS_PER_TOKEN;
	}

}
