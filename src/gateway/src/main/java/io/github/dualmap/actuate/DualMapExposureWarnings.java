package io.github.dualmap.actuate;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;

/**
 * Start-up warnings about what DualMap shows or lets clients do. For a gateway without
 * Spring Security: the {@code dualmap} endpoint on the client-facing port (its drain
 * operation when its access is {@code unrestricted}, else its reads, which name every
 * instance's address), and the replica-sync path (always on the client-facing port,
 * guarded by its bearer token alone). With or without Spring Security: the
 * {@code x-dualmap-*} response headers when they are on (every client learns which
 * backend served it), and each replica peer configured at a plain {@code http://} address
 * that is not loopback (the token crosses the network in clear).
 */
public class DualMapExposureWarnings implements ApplicationListener<ApplicationReadyEvent> {

	private static final Log logger = LogFactory.getLog(DualMapExposureWarnings.class);

	/** What of the {@code dualmap} endpoint clients reach without authentication. */
	public enum Endpoint {

		/**
		 * Nothing: not exposed over HTTP, on a port of its own, or behind Spring
		 * Security.
		 */
		NONE,

		/** Its reads. */
		READ,

		/** Its reads and its drain operation. */
		DRAIN

	}

	private final Endpoint endpoint;

	private final boolean headers;

	private final @Nullable String replicaPath;

	private final List<URI> peers;

	/**
	 * @param endpoint what of the {@code dualmap} endpoint clients reach,
	 * unauthenticated, on the client-facing port
	 * @param headers whether responses carry the {@code x-dualmap-*} headers
	 * @param replicaPath the replica-sync path when it is reachable with its token alone,
	 * else {@code null}
	 * @param peers the configured replica peers
	 */
	public DualMapExposureWarnings(Endpoint endpoint, boolean headers, @Nullable String replicaPath, List<URI> peers) {
		this.endpoint = endpoint;
		this.headers = headers;
		this.replicaPath = replicaPath;
		this.peers = List.copyOf(peers);
	}

	@Override
	public void onApplicationEvent(ApplicationReadyEvent event) {
		warnings().forEach(logger::warn);
	}

	/** The warnings this configuration gets, in the order they are logged. */
	List<String> warnings() {
		List<String> warnings = new ArrayList<>();
		if (this.endpoint == Endpoint.DRAIN) {
			warnings.add("The dualmap actuator endpoint's drain operation (management.endpoint.dualmap.access="
					+ "unrestricted) is reachable without authentication on the client-facing port: any client can "
					+ "drain instances. Move the actuator to an internal address (management.server.port and "
					+ "management.server.address) or add Spring Security (dualmap.security.role)");
		}
		else if (this.endpoint == Endpoint.READ) {
			warnings.add("The dualmap actuator endpoint is readable without authentication on the client-facing "
					+ "port: any client sees every instance's address and the pools' and tenants' state. Move the "
					+ "actuator to an internal address (management.server.port and management.server.address) or "
					+ "add Spring Security");
		}
		if (this.headers) {
			warnings.add("dualmap.headers.enabled is true: every response names the instance that served it "
					+ "(x-dualmap-instance) to whoever sent the request. Keep it for clients inside your network");
		}
		if (this.replicaPath != null) {
			warnings.add("The replica-sync path " + this.replicaPath + " is on the client-facing port, guarded by "
					+ "dualmap.replicas.token alone: keep it from external clients (an ingress or firewall rule "
					+ "on that path), or add Spring Security (dualmap.security.replica-role)");
		}
		for (URI peer : this.peers) {
			if ("http".equalsIgnoreCase(peer.getScheme()) && !loopback(peer.getHost())) {
				warnings.add("Replica peer " + peer + " is plain http: dualmap.replicas.token crosses the network in "
						+ "clear. Use an https:// peer (dualmap.replicas.ssl-bundle trusts its certificate)");
			}
		}
		return warnings;
	}

	private static boolean loopback(@Nullable String host) {
		if (host == null) {
			return false;
		}
		if (host.equalsIgnoreCase("localhost")) {
			return true;
		}
		// An address literal only: a name is not resolved for a log line.
		if (!host.chars().allMatch(c -> Character.digit(c, 16) >= 0 || c == '.' || c == ':' || c == '[' || c == ']')) {
			return false;
		}
		try {
			return InetAddress.getByName(host).isLoopbackAddress();
		}
		catch (UnknownHostException ex) {
			return false;
		}
	}

}
