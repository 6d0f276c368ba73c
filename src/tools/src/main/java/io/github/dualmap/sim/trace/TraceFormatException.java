package io.github.dualmap.sim.trace;

/**
 * A trace line that cannot be read; the message names the source, the line number and
 * what is wrong.
 */
public class TraceFormatException extends RuntimeException {

	private final int line;

	public TraceFormatException(String source, int line, String problem) {
		super(source + ", line " + line + ": " + problem);
		this.line = line;
	}

	/** The 1-based line number of the bad line. */
	public int line() {
		return line;
	}

}
