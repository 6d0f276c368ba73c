package io.github.dualmap.stats;

/**
 * A metrics body that could not be read as engine state: no known metric names, or a
 * malformed line in a known metric (the message names the line).
 */
public class MetricsParseException extends RuntimeException {

	public MetricsParseException(String message) {
		super(message);
	}

}
