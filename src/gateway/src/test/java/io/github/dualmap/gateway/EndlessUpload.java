package io.github.dualmap.gateway;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** A client that sends a chunked body without end. */
final class EndlessUpload {

	private EndlessUpload() {
	}

	/**
	 * Sends {@code head} (a request line and headers, {@code Transfer-Encoding: chunked}
	 * added) to {@code port} on loopback, then 64 KB chunks for as long as the server
	 * reads them: it must stop (the write fails) within 10 s.
	 */
	static void assertReadingStops(int port, String head) throws IOException {
		try (Socket socket = new Socket("127.0.0.1", port)) {
			OutputStream out = socket.getOutputStream();
			out.write((head + "Transfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
			byte[] chunk = ("10000\r\n" + "1".repeat(0x10000) + "\r\n").getBytes(StandardCharsets.US_ASCII);
			long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			assertThatExceptionOfType(IOException.class).isThrownBy(() -> {
				while (System.nanoTime() < until) {
					out.write(chunk);
				}
			});
		}
	}

}
