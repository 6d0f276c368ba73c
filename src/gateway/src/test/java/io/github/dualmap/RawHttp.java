package io.github.dualmap;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

/**
 * HTTP/1.1 by hand over a socket, for tests that need what clients do not offer:
 * pipelined requests, exact bytes on a kept-alive connection.
 */
public final class RawHttp {

	private RawHttp() {
	}

	/**
	 * A socket connected to the gateway on loopback {@code port}, reads waiting up to 10
	 * s (several seconds for answers due within a second, on a loaded machine).
	 */
	public static Socket connect(int port) throws IOException {
		Socket socket = new Socket();
		socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
		socket.setSoTimeout(10_000);
		return socket;
	}

	/** A request without a body. */
	public static String get(String path) {
		return "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
	}

	/** A request with a JSON body. */
	public static String post(String path, String json) {
		return "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: "
				+ json.getBytes(StandardCharsets.UTF_8).length + "\r\n\r\n" + json;
	}

	/**
	 * A slow client on {@code trickler}'s thread: writes {@code start}, then one byte
	 * ({@code a}) every {@code everyMillis} ms until {@code bytes} more have gone, and
	 * stops quietly once the server has closed the connection. Beside the test's own
	 * reads, so an answer is read as soon as it comes, not after a write the closed
	 * connection refuses.
	 */
	public static Future<?> trickle(ExecutorService trickler, OutputStream out, String start, int bytes,
			long everyMillis) {
		byte[] head = start.getBytes(StandardCharsets.US_ASCII);
		return trickler.submit(() -> {
			try {
				out.write(head);
				out.flush();
				for (int i = 0; i < bytes; i++) {
					Thread.sleep(everyMillis);
					out.write('a');
					out.flush();
				}
			}
			catch (IOException ex) {
				// Closed by the server.
			}
			return null;
		});
	}

	/** Whether the connection ends (a FIN, or a reset for bytes sent after it). */
	public static boolean closed(InputStream in) throws IOException {
		try {
			return in.read() < 0;
		}
		catch (SocketException reset) {
			return true;
		}
	}

	/**
	 * One HTTP/1.1 response (status line, headers and a body framed by
	 * {@code Content-Length} or chunked), as text.
	 */
	public static String readResponse(InputStream in) throws IOException {
		StringBuilder head = new StringBuilder();
		while (!head.toString().endsWith("\r\n\r\n")) {
			int b = in.read();
			if (b < 0) {
				throw new IOException("connection closed after " + head);
			}
			head.append((char) b);
		}
		String headers = head.toString().toLowerCase(Locale.ROOT);
		ByteArrayOutputStream body = new ByteArrayOutputStream();
		int length = headerInt(headers, "content-length");
		if (length >= 0) {
			body.write(in.readNBytes(length));
		}
		else if (headers.contains("transfer-encoding: chunked")) {
			for (int size; (size = Integer.parseInt(line(in).trim(), 16)) > 0;) {
				body.write(in.readNBytes(size));
				line(in);
			}
			line(in);
		}
		return head + body.toString(StandardCharsets.UTF_8);
	}

	static int headerInt(String headers, String name) {
		for (String line : headers.split("\r\n")) {
			if (line.startsWith(name + ":")) {
				return Integer.parseInt(line.substring(name.length() + 1).trim());
			}
		}
		return -1;
	}

	static String line(InputStream in) throws IOException {
		StringBuilder line = new StringBuilder();
		for (int b; (b = in.read()) != '\n';) {
			if (b < 0) {
				throw new IOException("connection closed");
			}
			line.append((char) b);
		}
		return line.toString();
	}

}
