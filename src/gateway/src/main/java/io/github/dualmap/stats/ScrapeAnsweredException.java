package io.github.dualmap.stats;

import java.io.IOException;

/**
 * A scrape the instance answered, but not with metrics it could use: a status other than
 * 200, or a body over the size limit. Unlike a timeout or a connection failure, it shows
 * the instance's server is alive.
 */
public class ScrapeAnsweredException extends IOException {

	private static final long serialVersionUID = 1L;

	public ScrapeAnsweredException(String message) {
		super(message);
	}

}
