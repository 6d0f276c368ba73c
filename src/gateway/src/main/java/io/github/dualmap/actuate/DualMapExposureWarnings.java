package io.github.dualmap.actuate;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.List;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.ApplicationListener;

/**
 * Start-up warnings, for a gateway without Spring Security, about DualMap operations that
 * clients could reach: the {@code dualmap} endpoint's drain operation when its access is
 * {@code unrestricted} and the actuator shares the client-facing port, and the
 * replica-sync path (always on the client-facing port, guarded by its bearer token
 * alone). Also, with or without Spring Security, each replica peer configured at a plain
 * {@code http://} address that is not loopback: the token crosses the network in clear.
 */
public class DualMapExposureWarnings implements ApplicationListener<ApplicationReadyEvent> {

	private static final Log logger = LogFactory.getLog(DualMapExposureWarnings.class);

	private final boolean drainOnClientPort;

	private final @Nullable String replicaPath;

	private final List<URI> peers;

	/**
	 * @param drainOnClientPort whether the drain operation is reachable, unauthenticated,
	 * on the client-facing port
	 * @param replicaPath the replica-sync path when it is reachable with its token alone,
	 * else {@code null}
	 * @param peers the configured replica peers
	 */
	public DualMapExposureWarnings(boolean drainOnClientPort, @Nullable String replicaPath, List<URI> peers) {
		this.drainOnClientPort = drainOnClientPort;
		this.replicaPath = replicaPath;
		this.peers = List.copyOf(peers);
	}

	@Override
	public void onApplicationEvent(ApplicationReadyEvent event) {
		if (this.drainOnClientPort) {
			logger.warn("The dualmap actuator endpoint's drain operation (management.endpoint.dualmap.access="
					+ "unrestricted) is reachable without authentication on the client-facing port: any client can "
					+ "drain instances. Move the actuator to an internal address (management.server.port and "
					+ "management.server.address) or add Spring Security (dualmap.security.role)");
		}
		if (this.replicaPath != null) {
			logger.warn("The replica-sync path " + this.replicaPath + " is on the client-facing port, guarded by "
					+ "dualmap.replicas.token alone: keep it from external clients (an ingress or firewall rule "
					+ "on that path), or add Spring Security (dualmap.security.replica-role)");
		}
		for (URI peer : this.peers) {
			if ("http".equalsIgnoreCase(peer.getScheme()) && !loopback(peer.getHost())) {
				logger.warn("Replica peer " + peer + " is plain http: dualmap.replicas.token crosses the network in "
						+ "clear. Use an https:// peer (dualmap.replicas.ssl-bundle trusts its certificate)");
			}
		}
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
