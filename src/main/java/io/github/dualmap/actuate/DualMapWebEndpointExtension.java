package io.github.dualmap.actuate;

import java.util.LinkedHashMap;
import java.util.Map;

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

	/** {@link DualMapEndpoint#drain}, or 400 with an OpenAI-style error body. */
	@WriteOperation
	public WebEndpointResponse<Object> drain(@Selector String service, @Selector String instance, boolean draining) {
		try {
			return new WebEndpointResponse<>(this.endpoint.drain(service, instance, draining));
		}
		catch (InvalidEndpointRequestException ex) {
			Map<String, Object> error = new LinkedHashMap<>();
			error.put("message", ex.getReason());
			error.put("type", "invalid_request_error");
			error.put("param", null);
			error.put("code", this.endpoint.isRouted(service) ? "unknown_instance" : "unknown_service");
			return new WebEndpointResponse<>(Map.of("error", error), WebEndpointResponse.STATUS_BAD_REQUEST);
		}
	}

}
