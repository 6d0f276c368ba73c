package io.github.dualmap.emulator;

import java.util.ArrayList;
import java.util.List;

/**
 * Several emulated instances on consecutive ports of one host, started and stopped
 * together.
 */
public final class EmulatorPool implements AutoCloseable {

	private final List<EmulatorServer> servers;

	private EmulatorPool(List<EmulatorServer> servers) {
		this.servers = List.copyOf(servers);
	}

	/**
	 * Starts {@code instances} servers on {@code basePort}, {@code basePort + 1}, ...
	 * (all on free ports when {@code basePort} is 0). Already started servers are stopped
	 * when one fails to bind.
	 */
	public static EmulatorPool start(EmulatorSettings settings, int instances, int basePort) {
		if (instances < 1) {
			throw new IllegalArgumentException("instances must be >= 1 but was " + instances);
		}
		if (basePort < 0 || basePort + instances - 1 > 65535) {
			throw new IllegalArgumentException(
					"ports " + basePort + ".." + (basePort + instances - 1) + " are not in [0, 65535]");
		}
		List<EmulatorServer> started = new ArrayList<>();
		try {
			for (int i = 0; i < instances; i++) {
				started.add(EmulatorServer.start(settings, basePort == 0 ? 0 : basePort + i));
			}
		}
		catch (RuntimeException ex) {
			started.forEach(EmulatorServer::close);
			throw ex;
		}
		return new EmulatorPool(started);
	}

	public List<EmulatorServer> servers() {
		return servers;
	}

	@Override
	public void close() {
		servers.forEach(EmulatorServer::close);
	}

}
