package io.github.dualmap.gateway;

import io.github.dualmap.prompt.InvalidRequestException;
import io.github.dualmap.prompt.OpenAiError;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.InvalidMediaTypeException;
import org.springframework.http.MediaType;

/**
 * What a request's {@code Content-Type} lets the gateway read its body as. OpenAI's API
 * and vLLM take JSON ({@code application/json}) and, for uploads such as audio
 * transcriptions, {@code multipart/form-data}; they refuse a body of any other type
 * whatever it holds. A request without a {@code Content-Type} (many scripts and curl-like
 * clients leave it out) is read as JSON.
 */
final class ContentTypes {

	/** The OpenAI error code of a body whose type is not one the endpoint takes. */
	static final String UNSUPPORTED_CODE = "unsupported_media_type";

	/** At most this much of a header that is no media type is repeated in the answer. */
	private static final int QUOTED_CHARS = 100;

	private ContentTypes() {
	}

	/**
	 * Whether the body is to be read as JSON: no {@code Content-Type} (or a blank one),
	 * {@code application/json} or a {@code +json} type, with any parameters.
	 */
	static boolean json(HttpHeaders headers) {
		String raw = headers.getFirst(HttpHeaders.CONTENT_TYPE);
		if (raw == null || raw.isBlank()) {
			return true;
		}
		MediaType type = parsed(raw);
		return type != null && !type.isWildcardType() && !type.isWildcardSubtype()
				&& (MediaType.APPLICATION_JSON.isCompatibleWith(type)
						|| ("application".equals(type.getType()) && type.getSubtype().endsWith("+json")));
	}

	/** Whether the body is a {@code multipart/form-data} upload. */
	static boolean multipart(HttpHeaders headers) {
		String raw = headers.getFirst(HttpHeaders.CONTENT_TYPE);
		MediaType type = raw == null ? null : parsed(raw);
		return type != null && !type.isWildcardSubtype() && MediaType.MULTIPART_FORM_DATA.isCompatibleWith(type);
	}

	/**
	 * The 415 refusal of a body of a type the endpoint does not take.
	 * @param expected what it takes, for the message (e.g. {@code application/json})
	 */
	static InvalidRequestException unsupported(HttpHeaders headers, String expected) {
		return new InvalidRequestException(HttpStatus.UNSUPPORTED_MEDIA_TYPE.value(), OpenAiError.INVALID_REQUEST,
				"Unsupported Content-Type (" + named(headers) + "): expected " + expected, null, UNSUPPORTED_CODE,
				null);
	}

	/** The type as sent, without its parameters; a header that is none, cut short. */
	private static String named(HttpHeaders headers) {
		String raw = String.valueOf(headers.getFirst(HttpHeaders.CONTENT_TYPE)).strip();
		MediaType type = parsed(raw);
		if (type != null) {
			return type.getType() + "/" + type.getSubtype();
		}
		return raw.length() <= QUOTED_CHARS ? raw : raw.substring(0, QUOTED_CHARS) + "...";
	}

	private static @Nullable MediaType parsed(String raw) {
		try {
			return MediaType.parseMediaType(raw);
		}
		catch (InvalidMediaTypeException ex) {
			return null;
		}
	}

}
