package io.github.dualmap.gateway;

import java.time.Duration;

/**
 * An instance's answer went silent: no body byte for
 * {@code dualmap.response-idle-timeout} once its status line came.
 */
public class ResponseIdleException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	public ResponseIdleException(Duration timeout) {
		super("no byte of the answer for " + timeout.toMillis() + " ms (dualmap.response-idle-timeout)", null, false,
				false);
	}

}
