package io.github.dualmap.actuate;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * The drain operation over HTTP: a refused drain answers 400 with a body naming the
 * unknown service or instance. Spring Boot's error handling shows an operation's message
 * only with {@code spring.web.error.include-message}, so the plain endpoint's 400 came
 * without it.
 */
@EndpointWebExtension(endpoint = DualMapEndpoint.class)
public class DualMapWebEndpointExtension {

	private final DualMapEndpoint endpoint;

	public DualMapWebEndpointExtension(DualMapEndpoint endpoint) {
		this.endpoint = endpoint;
	}

	/**
	 * {@link DualMapEndpoint#drain}, or 400 with an OpenAI-style error body: for an
	 * unknown service or instance, and for a body whose {@code draining} is missing,
	 * {@code null} or anything but {@code true} or {@code false}.
	 * <p>
	 * {@code draining} is taken as a string: Spring Boot reads a write operation's body
	 * as a {@code Map<String, String>} and converts each value to its parameter's type,
	 * so a {@code boolean} parameter took {@code "yes"}, {@code "on"} and {@code "1"} as
	 * {@code true}, and a missing value never reached the operation. (A JSON string
	 * {@code "true"} arrives as the same text as the boolean and is taken as it.)
	 */
	@WriteOperation
	public WebEndpointResponse<Object> drain(@Selector String service, @Selector String instance,
			@Nullable String draining) {
		if (!"true".equals(draining) && !"false".equals(draining)) {
			return badRequest(
					invalidDraining(draining == null ? "has no draining value" : "has draining '" + draining + "'"),
					"draining", INVALID_DRAINING);
		}
		try {
			return new WebEndpointResponse<>(this.endpoint.drain(service, instance, Boolean.parseBoolean(draining)));
		}
		catch (InvalidEndpointRequestException ex) {
			return badRequest(ex.getReason(), null,
					this.endpoint.isRouted(service) ? "unknown_instance" : "unknown_service");
		}
	}

	/** The error code of a drain body without a JSON boolean {@code draining}. */
	static final String INVALID_DRAINING = "invalid_draining";

	/** The message of a drain body without a JSON boolean {@code draining}. */
	static String invalidDraining(String what) {
		return "the body " + what + "; send {\"draining\": true} to drain the instance or {\"draining\": false} to"
				+ " undrain it (content-type application/json)";
	}

	/** A 400 with the OpenAI-style error body this endpoint answers. */
	static WebEndpointResponse<Object> badRequest(String message, @Nullable String param, String code) {
		return new WebEndpointResponse<>(Map.of("error", error(message, param, code)),
				WebEndpointResponse.STATUS_BAD_REQUEST);
	}

	/** The {@code error} object of an OpenAI-style error body. */
	static Map<String, Object> error(String message, @Nullable String param, String code) {
		Map<String, Object> error = new LinkedHashMap<>();
		error.put("message", message);
		error.put("type", "invalid_request_error");
		error.put("param", param);
		error.put("code", code);
		return error;
	}

}
