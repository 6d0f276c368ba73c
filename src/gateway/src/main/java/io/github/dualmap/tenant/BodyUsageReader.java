package io.github.dualmap.tenant;

import java.io.ByteArrayOutputStream;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads the {@code usage} of a whole (non-streamed) JSON answer, holding a copy of at
 * most {@code maxBytes} of it while it passes; a larger body is not read. Not
 * thread-safe: one per response, fed in order.
 */
public final class BodyUsageReader {

	private final ByteArrayOutputStream body = new ByteArrayOutputStream();

	private final int maxBytes;

	private boolean tooLarge;

	public BodyUsageReader(int maxBytes) {
		this.maxBytes = maxBytes;
	}

	/** Copies {@code chunk}, unless the body is past the limit. */
	public void accept(byte[] chunk) {
		if (this.tooLarge) {
			return;
		}
		if (this.body.size() + chunk.length > this.maxBytes) {
			this.tooLarge = true;
			this.body.reset();
			return;
		}
		this.body.write(chunk, 0, chunk.length);
	}

	/** The body's usage; {@code null} when it has none or could not be read. */
	public @Nullable TokenUsage usage() {
		if (this.tooLarge || this.body.size() == 0) {
			return null;
		}
		try {
			JsonNode root = JsonMapper.shared().readTree(this.body.toByteArray());
			return root.isObject() ? TokenUsage.of(root.get("usage")) : null;
		}
		catch (JacksonException ex) {
			return null;
		}
	}

}
