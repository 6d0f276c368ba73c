package io.github.dualmap.gateway;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.function.IntConsumer;
import java.util.zip.GZIPInputStream;
import java.util.zip.Inflater;
import java.util.zip.InflaterInputStream;

import io.github.dualmap.prompt.InvalidRequestException;
import io.github.dualmap.prompt.OpenAiError;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.util.ClassUtils;

/**
 * A request body as the prompt parser reads it: a body sent with
 * {@code Content-Encoding: gzip} or {@code deflate}, or {@code zstd} or {@code br} when
 * the gateway has their decoders (zstd-jni, brotli4j with its native library for the
 * platform), or several codings of those, is decoded, under the same size limit as the
 * body itself, so its prompt is routed like an uncompressed one. Only the gateway's
 * reading is decoded: the backend still gets the bytes the client sent, with their
 * header, and decides for itself.
 */
final class BodyEncodings {

	private static final int CHUNK = 8192;

	/** Whether {@code zstd} bodies are read: zstd-jni is present and loads. */
	static final boolean ZSTD = ClassUtils.isPresent("com.github.luben.zstd.ZstdInputStream",
			BodyEncodings.class.getClassLoader()) && ZstdDecoding.available();

	/**
	 * Whether {@code br} bodies are read: brotli4j is present with the native library of
	 * this platform.
	 */
	static final boolean BROTLI = ClassUtils.isPresent("com.aayushatharva.brotli4j.Brotli4jLoader",
			BodyEncodings.class.getClassLoader()) && BrotliDecoding.available();

	/** Bodies up to this size, without a coding, are parsed where they were read. */
	static final int INLINE_BYTES = 256 * 1024;

	private BodyEncodings() {
	}

	/**
	 * The decoded body: {@code body} itself when it has no coding (or {@code identity}),
	 * {@code null} for a coding the gateway does not read (an unknown one, or
	 * {@code zstd} or {@code br} without their decoders): such a request is routed by
	 * load.
	 * @throws DataBufferLimitException when the decoded body exceeds {@code maxBytes}
	 * @throws InvalidRequestException when the body is not valid data of its coding
	 */
	static byte @Nullable [] decoded(HttpHeaders headers, byte[] body, int maxBytes) {
		return decoded(headers, body, maxBytes, bytes -> {
		});
	}

	/**
	 * As {@link #decoded(HttpHeaders, byte[], int)}, telling {@code reserve} of each
	 * chunk of decoded bytes before it is held, so a small compressed body is counted at
	 * its size in memory; {@code reserve} throws to refuse it.
	 */
	static byte @Nullable [] decoded(HttpHeaders headers, byte[] body, int maxBytes, IntConsumer reserve) {
		List<String> codings = codings(headers);
		if (codings.isEmpty() || body.length == 0) {
			return body;
		}
		for (String coding : codings) {
			if (!reads(coding)) {
				return null;
			}
		}
		byte[] bytes = body;
		// Codings are listed in the order they were applied: undo the last first.
		for (int i = codings.size() - 1; i >= 0; i--) {
			bytes = decode(codings.get(i), bytes, maxBytes, reserve);
		}
		return bytes;
	}

	/**
	 * Where large bodies are decoded and parsed: one thread per core, so at most that
	 * many parses (each several times its body in transient memory) run at once, the
	 * others waiting their turn.
	 */
	private static final Scheduler PARSING = Schedulers.newBoundedElastic(Runtime.getRuntime().availableProcessors(),
			Integer.MAX_VALUE, "dualmap-parse", 60, true);

	/**
	 * {@code work} (decoding and parsing {@code body}) as a {@code Mono}: run on the
	 * caller's thread for a small body without coding, else on the {@code dualmap-parse}
	 * threads, so a large body or a small one that decodes to a large one (parsing
	 * megabytes takes milliseconds to seconds) does not hold up an event loop serving
	 * other connections.
	 */
	static <T> Mono<T> offloaded(HttpHeaders headers, byte[] body, Callable<@Nullable T> work) {
		Mono<T> done = Mono.fromCallable(work);
		return body.length > INLINE_BYTES || !codings(headers).isEmpty() ? done.subscribeOn(PARSING) : done;
	}

	private static boolean reads(String coding) {
		return switch (coding) {
			case "gzip", "x-gzip", "deflate" -> true;
			case "zstd" -> ZSTD;
			case "br" -> BROTLI;
			default -> false;
		};
	}

	private static List<String> codings(HttpHeaders headers) {
		List<String> codings = new ArrayList<>();
		for (String header : headers.getOrEmpty(HttpHeaders.CONTENT_ENCODING)) {
			for (String coding : header.split(",")) {
				String c = coding.trim().toLowerCase(Locale.ROOT);
				if (!c.isEmpty() && !c.equals("identity")) {
					codings.add(c);
				}
			}
		}
		return codings;
	}

	private static byte[] decode(String coding, byte[] bytes, int maxBytes, IntConsumer reserve) {
		try {
			if (coding.equals("zstd")) {
				return readAll(ZstdDecoding.open(new ByteArrayInputStream(bytes), maxBytes), maxBytes, reserve);
			}
			if (coding.equals("br")) {
				return readAll(BrotliDecoding.open(new ByteArrayInputStream(bytes)), maxBytes, reserve);
			}
			if (!coding.equals("deflate")) {
				return readAll(new GZIPInputStream(new ByteArrayInputStream(bytes), CHUNK), maxBytes, reserve);
			}
			try {
				return readAll(new InflaterInputStream(new ByteArrayInputStream(bytes)), maxBytes, reserve);
			}
			catch (IOException zlib) {
				// "deflate" is meant to be zlib-wrapped, but some clients send raw
				// DEFLATE.
				return readAll(new InflaterInputStream(new ByteArrayInputStream(bytes), new Inflater(true)), maxBytes,
						reserve);
			}
		}
		catch (IOException ex) {
			throw new InvalidRequestException(400, OpenAiError.INVALID_REQUEST, "request body is not valid " + coding
					+ " data (Content-Encoding: " + coding + "): " + ex.getMessage(), null, ex);
		}
	}

	private static byte[] readAll(InputStream in, int maxBytes, IntConsumer reserve) throws IOException {
		try (in) {
			ByteArrayOutputStream out = new ByteArrayOutputStream(CHUNK);
			byte[] chunk = new byte[CHUNK];
			int n;
			while ((n = in.read(chunk)) > 0) {
				if (out.size() + n > maxBytes) {
					throw new DataBufferLimitException("decoded request body exceeds " + maxBytes + " bytes");
				}
				reserve.accept(n);
				out.write(chunk, 0, n);
			}
			return out.toByteArray();
		}
	}

	/**
	 * zstd-jni, in a class of its own: loaded only when the library is present.
	 */
	private static final class ZstdDecoding {

		/** The largest window a frame may ask for, whatever the body limit: 8 MiB. */
		private static final int MIN_WINDOW_LOG = 23;

		/** zstd's own bound for decoding without the long mode. */
		private static final int MAX_WINDOW_LOG = 27;

		static boolean available() {
			try {
				com.github.luben.zstd.util.Native.load();
				return true;
			}
			catch (LinkageError ex) {
				return false;
			}
		}

		/**
		 * A decoder of {@code in} that refuses a frame asking for a window larger than
		 * the body limit needs (at least 8 MiB, the window of zstd's strongest regular
		 * levels), so a small body cannot make it allocate up to zstd's 128 MiB.
		 */
		static InputStream open(InputStream in, int maxBytes) throws IOException {
			int log = 32 - Integer.numberOfLeadingZeros(Math.max(1, maxBytes - 1));
			com.github.luben.zstd.ZstdInputStream zstd = new com.github.luben.zstd.ZstdInputStream(in);
			zstd.setLongMax(Math.min(MAX_WINDOW_LOG, Math.max(MIN_WINDOW_LOG, log)));
			return zstd;
		}

	}

	/**
	 * brotli4j, in a class of its own: loaded only when the library is present.
	 */
	private static final class BrotliDecoding {

		static boolean available() {
			try {
				return com.aayushatharva.brotli4j.Brotli4jLoader.isAvailable();
			}
			catch (LinkageError ex) {
				return false;
			}
		}

		static InputStream open(InputStream in) throws IOException {
			return new com.aayushatharva.brotli4j.decoder.BrotliInputStream(in);
		}

	}

}
