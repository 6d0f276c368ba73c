package io.github.dualmap.autoconfigure;

/** {@code dualmap.headers.*}: response headers that explain each decision. */
public class HeadersProperties {

	/**
	 * Whether x-dualmap-instance, x-dualmap-reason and x-dualmap-queue-ms are added to
	 * responses.
	 */
	private boolean enabled = true;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

}
