package io.github.dualmap.emulator;

/**
 * The deterministic text the emulator generates: token {@code i} of every answer is the
 * same word, so responses are reproducible and their length in tokens is obvious.
 */
final class FillerText {

	private static final String[] WORDS = { " The", " quick", " brown", " fox", " jumps", " over", " the", " lazy",
			" dog", "." };

	private FillerText() {
	}

	/** Text of output token {@code index} (1-based). */
	static String token(int index) {
		return WORDS[(index - 1) % WORDS.length];
	}

	/** Text of the first {@code count} output tokens. */
	static String tokens(int count) {
		StringBuilder text = new StringBuilder(count * 6);
		for (int i = 1; i <= count; i++) {
			text.append(token(i));
		}
		return text.toString();
	}

}
