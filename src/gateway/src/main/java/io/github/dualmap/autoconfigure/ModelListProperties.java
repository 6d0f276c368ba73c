package io.github.dualmap.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.github.dualmap.gateway.ModelListGatewayFilterFactory;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;

/**
 * {@code dualmap.model-list.*}: the {@code ModelList} route filter: what its routes do
 * not set (in route configuration they set only the services to list).
 */
public class ModelListProperties {

	/** The path of the model list on an instance. */
	@NotNull(message = "dualmap.model-list.path must be set")
	@Pattern(regexp = "/.*", message = "dualmap.model-list.path must start with /")
	private String path = ModelListGatewayFilterFactory.Defaults.BUILT_IN.path();

	/** How long to wait for one instance's list. */
	@NotNull(message = "dualmap.model-list.timeout must be set")
	private Duration timeout = ModelListGatewayFilterFactory.Defaults.BUILT_IN.timeout();

	/**
	 * How long a merged list is served again to the same credentials (0: ask the
	 * instances every time).
	 */
	@NotNull(message = "dualmap.model-list.cache-ttl must be set")
	private Duration cacheTtl = ModelListGatewayFilterFactory.Defaults.BUILT_IN.cacheTtl();

	/**
	 * Services DualMap does not route (a plain lb:// pool, such as a speech model's)
	 * whose models are listed too, found through the discovery client.
	 */
	private List<String> otherServices = new ArrayList<>();

	@AssertTrue(message = "dualmap.model-list.timeout must be > 0 and cache-ttl >= 0")
	private boolean isDurationsValid() {
		return this.timeout.toNanos() > 0 && !this.cacheTtl.isNegative();
	}

	public String getPath() {
		return this.path;
	}

	public void setPath(String path) {
		this.path = path;
	}

	public Duration getTimeout() {
		return this.timeout;
	}

	public void setTimeout(Duration timeout) {
		this.timeout = timeout;
	}

	public Duration getCacheTtl() {
		return this.cacheTtl;
	}

	public void setCacheTtl(Duration cacheTtl) {
		this.cacheTtl = cacheTtl;
	}

	public List<String> getOtherServices() {
		return this.otherServices;
	}

	public void setOtherServices(List<String> otherServices) {
		this.otherServices = otherServices;
	}

}
