package io.github.dualmap.autoconfigure;

import java.time.Duration;

import io.github.dualmap.gateway.HeaderReadTimeout;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.NotNull;

/** {@code dualmap.server.*}: the gateway's own HTTP server (Reactor Netty). */
public class HttpServerProperties {

	/**
	 * Ask for the next read of an HTTP/1.1 connection after every response: works around
	 * reactor/reactor-netty#4361 (up to at least 1.3.7), where a keep-alive connection
	 * whose early or pipelined request was answered at once (a 404, an actuator read)
	 * stops being read and the client's next request hangs. Turn off once the Reactor
	 * Netty in use carries the fix.
	 */
	private boolean keepAliveReads = true;

	/**
	 * End a response of unknown length (a streamed completion) to an HTTP/1.0 request by
	 * closing the connection instead of chunked encoding, which HTTP/1.0 clients (nginx
	 * proxying with its default proxy_http_version 1.0) do not decode.
	 */
	private boolean http10CloseDelimited = true;

	/**
	 * The longest a request's head (request line and headers) may take to arrive, from
	 * its first byte to its last; a slower one gets 408 and its connection is closed
	 * (slowloris). Idle time between requests does not count (server.netty.idle-timeout
	 * bounds it). 0 turns the deadline off; a head the server cannot decode still gets
	 * the OpenAI error body either way.
	 */
	@NotNull(message = "dualmap.server.header-read-timeout must be set")
	private Duration headerReadTimeout = HeaderReadTimeout.DEFAULT_TIMEOUT;

	@AssertTrue(message = "dualmap.server.header-read-timeout must be >= 0 (0: off)")
	private boolean isHeaderReadTimeoutNonNegative() {
		return this.headerReadTimeout == null || !this.headerReadTimeout.isNegative();
	}

	public boolean isKeepAliveReads() {
		return this.keepAliveReads;
	}

	public void setKeepAliveReads(boolean keepAliveReads) {
		this.keepAliveReads = keepAliveReads;
	}

	public boolean isHttp10CloseDelimited() {
		return this.http10CloseDelimited;
	}

	public void setHttp10CloseDelimited(boolean http10CloseDelimited) {
		this.http10CloseDelimited = http10CloseDelimited;
	}

	public Duration getHeaderReadTimeout() {
		return this.headerReadTimeout;
	}

	public void setHeaderReadTimeout(Duration headerReadTimeout) {
		this.headerReadTimeout = headerReadTimeout;
	}

}
