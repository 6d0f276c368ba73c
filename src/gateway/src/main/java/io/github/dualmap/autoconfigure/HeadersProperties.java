package io.github.dualmap.autoconfigure;

/** {@code dualmap.headers.*}: response headers that explain each decision. */
public class HeadersProperties {

	/**
	 * Whether x-dualmap-instance, x-dualmap-reason and x-dualmap-queue-ms are added to
	 * responses. Off by default: the first names a backend (usually its host:port) to
	 * every client.
	 */
	private boolean enabled = false;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

}
