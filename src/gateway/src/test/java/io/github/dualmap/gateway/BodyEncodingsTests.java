package io.github.dualmap.gateway;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;

import com.aayushatharva.brotli4j.Brotli4jLoader;
import com.aayushatharva.brotli4j.encoder.Encoder;
import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdOutputStream;
import io.github.dualmap.prompt.InvalidRequestException;
import org.junit.jupiter.api.Test;

import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class BodyEncodingsTests {

	private static final byte[] JSON = "{\"prompt\":\"hello\"}".getBytes(StandardCharsets.UTF_8);

	private static HttpHeaders encoding(String... values) {
		HttpHeaders headers = new HttpHeaders();
		for (String v : values) {
			headers.add(HttpHeaders.CONTENT_ENCODING, v);
		}
		return headers;
	}

	private static byte[] gzip(byte[] bytes) throws IOException {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		try (GZIPOutputStream z = new GZIPOutputStream(out)) {
			z.write(bytes);
		}
		return out.toByteArray();
	}

	private static byte[] deflate(byte[] bytes, boolean raw) throws IOException {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		try (DeflaterOutputStream z = new DeflaterOutputStream(out, new Deflater(Deflater.DEFAULT_COMPRESSION, raw))) {
			z.write(bytes);
		}
		return out.toByteArray();
	}

	@Test
	void largeOrCompressedBodiesAreParsedOffTheCallersThread() throws IOException {
		String caller = Thread.currentThread().getName();
		assertThat(BodyEncodings.offloaded(new HttpHeaders(), JSON, () -> Thread.currentThread().getName()).block())
			.isEqualTo(caller);
		assertThat(BodyEncodings
			.offloaded(new HttpHeaders(), new byte[BodyEncodings.INLINE_BYTES + 1],
					() -> Thread.currentThread().getName())
			.block()).startsWith("dualmap-parse");
		assertThat(
				BodyEncodings.offloaded(encoding("gzip"), gzip(JSON), () -> Thread.currentThread().getName()).block())
			.startsWith("dualmap-parse");
	}

	@Test
	void decodedBytesAreReservedAsTheyAreDecodedAndARefusalStopsIt() throws IOException {
		byte[] large = new byte[100_000];
		AtomicInteger reserved = new AtomicInteger();
		assertThat(BodyEncodings.decoded(encoding("gzip"), gzip(large), 200_000, reserved::addAndGet)).hasSize(100_000);
		assertThat(reserved).hasValue(100_000);
		reserved.set(0);
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> BodyEncodings.decoded(encoding("gzip"), gzip(large), 200_000, n -> {
				if (reserved.addAndGet(n) > 30_000) {
					throw new IllegalStateException("full");
				}
			}));
		assertThat(reserved.get()).isLessThan(50_000);
		// Nothing to decode, nothing reserved: the body was counted as it was read.
		reserved.set(0);
		BodyEncodings.decoded(new HttpHeaders(), large, 200_000, reserved::addAndGet);
		assertThat(reserved).hasValue(0);
	}

	@Test
	void plainAndIdentityBodiesAreReadAsTheyAre() {
		assertThat(BodyEncodings.decoded(new HttpHeaders(), JSON, 100)).isSameAs(JSON);
		assertThat(BodyEncodings.decoded(encoding("identity"), JSON, 100)).isSameAs(JSON);
	}

	@Test
	void gzipXGzipZlibAndRawDeflateAreDecodedCaseInsensitively() throws IOException {
		assertThat(BodyEncodings.decoded(encoding("GZIP"), gzip(JSON), 100)).isEqualTo(JSON);
		assertThat(BodyEncodings.decoded(encoding("x-gzip"), gzip(JSON), 100)).isEqualTo(JSON);
		assertThat(BodyEncodings.decoded(encoding("deflate"), deflate(JSON, false), 100)).isEqualTo(JSON);
		assertThat(BodyEncodings.decoded(encoding("deflate"), deflate(JSON, true), 100)).isEqualTo(JSON);
	}

	@Test
	void severalCodingsAreUndoneLastFirst() throws IOException {
		byte[] twice = gzip(deflate(JSON, false));
		assertThat(BodyEncodings.decoded(encoding("deflate, gzip"), twice, 100)).isEqualTo(JSON);
		assertThat(BodyEncodings.decoded(encoding("deflate", "gzip"), twice, 100)).isEqualTo(JSON);
	}

	@Test
	void codingsItDoesNotReadAreLeftUnread() throws IOException {
		assertThat(BodyEncodings.decoded(encoding("compress"), JSON, 100)).isNull();
		assertThat(BodyEncodings.decoded(encoding("gzip, exi"), gzip(JSON), 100)).isNull();
	}

	static byte[] zstd(byte[] bytes) {
		return Zstd.compress(bytes);
	}

	static byte[] brotli(byte[] bytes) throws IOException {
		Brotli4jLoader.ensureAvailability();
		return Encoder.compress(bytes);
	}

	@Test
	void zstdAndBrotliAreDecodedWithTheirLibrariesPresent() throws IOException {
		assertThat(BodyEncodings.ZSTD).isTrue();
		assertThat(BodyEncodings.BROTLI).isTrue();
		assertThat(BodyEncodings.decoded(encoding("zstd"), zstd(JSON), 100)).isEqualTo(JSON);
		assertThat(BodyEncodings.decoded(encoding("BR"), brotli(JSON), 100)).isEqualTo(JSON);
		assertThat(BodyEncodings.decoded(encoding("gzip, zstd"), zstd(gzip(JSON)), 100)).isEqualTo(JSON);
		assertThat(BodyEncodings.decoded(encoding("br", "deflate"), deflate(brotli(JSON), false), 100)).isEqualTo(JSON);
		AtomicInteger reserved = new AtomicInteger();
		assertThat(BodyEncodings.decoded(encoding("zstd"), zstd(new byte[100_000]), 200_000, reserved::addAndGet))
			.hasSize(100_000);
		assertThat(reserved).hasValue(100_000);
	}

	@Test
	void zstdAndBrotliBodiesAreBoundedAndBadDataNamed() throws IOException {
		for (String coding : new String[] { "zstd", "br" }) {
			byte[] zeros = coding.equals("zstd") ? zstd(new byte[10_000]) : brotli(new byte[10_000]);
			assertThat(BodyEncodings.decoded(encoding(coding), zeros, 10_000)).as(coding).hasSize(10_000);
			assertThatExceptionOfType(DataBufferLimitException.class).as(coding)
				.isThrownBy(() -> BodyEncodings.decoded(encoding(coding), zeros, 9_999));
			byte[] bomb = coding.equals("zstd") ? zstd(new byte[64 << 20]) : brotli(new byte[64 << 20]);
			assertThat(bomb.length).as(coding).isLessThan(100_000);
			AtomicInteger reserved = new AtomicInteger();
			assertThatExceptionOfType(DataBufferLimitException.class).as(coding)
				.isThrownBy(() -> BodyEncodings.decoded(encoding(coding), bomb, 1 << 20, reserved::addAndGet));
			assertThat(reserved.get()).as(coding).isLessThanOrEqualTo(1 << 20);
			assertThatExceptionOfType(InvalidRequestException.class).as(coding)
				.isThrownBy(() -> BodyEncodings.decoded(encoding(coding), JSON, 100))
				.satisfies(ex -> assertThat(ex.status()).isEqualTo(400))
				.withMessageStartingWith("request body is not valid " + coding + " data");
			byte[] whole = coding.equals("zstd") ? zstd(JSON) : brotli(JSON);
			byte[] truncated = java.util.Arrays.copyOf(whole, whole.length - 3);
			assertThatExceptionOfType(InvalidRequestException.class).as(coding)
				.isThrownBy(() -> BodyEncodings.decoded(encoding(coding), truncated, 100))
				.withMessageStartingWith("request body is not valid " + coding + " data");
		}
	}

	@Test
	void aZstdFrameAskingForAWindowBeyondWhatTheLimitNeedsIsRefused() throws IOException {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		try (ZstdOutputStream z = new ZstdOutputStream(out)) {
			// Long mode: a 128 MiB window, which the decoder would allocate.
			z.setLong(27);
			z.write(JSON);
		}
		assertThatExceptionOfType(InvalidRequestException.class)
			.isThrownBy(() -> BodyEncodings.decoded(encoding("zstd"), out.toByteArray(), 1 << 20))
			.withMessageStartingWith("request body is not valid zstd data");
		// A limit that needs that window allows it.
		assertThat(BodyEncodings.decoded(encoding("zstd"), out.toByteArray(), 1 << 27)).isEqualTo(JSON);
	}

	@Test
	void theDecodedSizeIsBoundedAndBadDataNamed() throws IOException {
		byte[] zeros = gzip(new byte[10_000]);
		assertThat(BodyEncodings.decoded(encoding("gzip"), zeros, 10_000)).hasSize(10_000);
		assertThatExceptionOfType(DataBufferLimitException.class)
			.isThrownBy(() -> BodyEncodings.decoded(encoding("gzip"), zeros, 9_999));
		assertThatExceptionOfType(InvalidRequestException.class)
			.isThrownBy(() -> BodyEncodings.decoded(encoding("gzip"), JSON, 100))
			.satisfies(ex -> assertThat(ex.status()).isEqualTo(400))
			.withMessageStartingWith("request body is not valid gzip data");
		assertThatExceptionOfType(InvalidRequestException.class)
			.isThrownBy(() -> BodyEncodings.decoded(encoding("deflate"), JSON, 100))
			.withMessageStartingWith("request body is not valid deflate data");
	}

}
