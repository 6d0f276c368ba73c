package io.github.dualmap.emulator.demo;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;

import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * Consecutive free ports on loopback, for a demo pool whose instances must follow one
 * another from {@code dualmap.demo.base-port}.
 */
final class FreePorts {

	private FreePorts() {
	}

	/**
	 * The demo pool's settings of a test: its instances from {@code basePort}, their
	 * model 20 times faster than real time.
	 */
	static void demoPool(DynamicPropertyRegistry registry, int basePort) {
		registry.add("dualmap.demo.base-port", () -> basePort);
		registry.add("dualmap.demo.time-scale", () -> 20);
	}

	/** The first of {@code count} consecutive ports free on loopback right now. */
	static int consecutive(int count) {
		for (int attempt = 0; attempt < 50; attempt++) {
			int base;
			try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
				base = probe.getLocalPort();
			}
			catch (IOException ex) {
				continue;
			}
			if (base + count > 65535) {
				continue;
			}
			boolean free = true;
			for (int p = base; p < base + count && free; p++) {
				try (ServerSocket s = new ServerSocket(p, 1, InetAddress.getLoopbackAddress())) {
					s.setReuseAddress(true);
				}
				catch (IOException ex) {
					free = false;
				}
			}
			if (free) {
				return base;
			}
		}
		throw new IllegalStateException("no " + count + " consecutive free ports on loopback");
	}

}
