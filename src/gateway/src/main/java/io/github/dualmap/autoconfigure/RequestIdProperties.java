package io.github.dualmap.autoconfigure;

import jakarta.validation.constraints.Pattern;

/**
 * {@code dualmap.request-id.*}: the request id that follows each request on a DualMap
 * route to the engine and back to the client.
 */
public class RequestIdProperties {

	/**
	 * Whether requests get the header: the client's value kept, else a new id; also on
	 * the response.
	 */
	private boolean enabled = true;

	/** The header (vLLM reads X-Request-Id as its own request id). */
	@Pattern(regexp = "[A-Za-z0-9!#$%&'*+.^_`|~-]+", message = "dualmap.request-id.header must be an HTTP header name")
	private String header = "x-request-id";

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getHeader() {
		return this.header;
	}

	public void setHeader(String header) {
		this.header = header;
	}

}
