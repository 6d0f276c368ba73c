package io.github.dualmap.actuate;

import java.util.Optional;
import java.util.function.Supplier;

import io.github.dualmap.prompt.OpenAiError;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.security.authentication.AnonymousAuthenticationToken;
import org.springframework.security.core.Authentication;
import org.springframework.security.core.context.ReactiveSecurityContextHolder;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;

/**
 * Where Spring Security is present: the write operations of the {@code dualmap} actuator
 * endpoint (drain, undrain) need an authenticated caller with
 * {@code dualmap.security.role}, and the replica-sync path a caller with
 * {@code dualmap.security.replica-role} when one is set (its bearer token is checked
 * anyway). It runs after Spring Security's filter chain, whose authentication (HTTP
 * basic, a JWT, a client certificate: the application's choice) it reads, so an
 * application chain that permits every request still leaves these operations closed: 401
 * without an authenticated caller, 403 without the role, as OpenAI-style errors.
 */
public class DualMapAccessFilter implements WebFilter, Ordered {

	/** Just after Spring Security's {@code WebFilterChainProxy} (-100). */
	public static final int ORDER = -99;

	private final Supplier<@Nullable String> endpointPath;

	private final String role;

	private final @Nullable String replicaPath;

	private final @Nullable String replicaRole;

	/**
	 * @param endpointPath the path of the {@code dualmap} endpoint on this server, or
	 * {@code null} when it is not mapped here
	 * @param role the role (no {@code ROLE_} prefix) its write operations need
	 * @param replicaPath the replica-sync path, or {@code null} without replica sync
	 * @param replicaRole the role (no {@code ROLE_} prefix) the replica path needs, or
	 * {@code null} for its token alone
	 */
	public DualMapAccessFilter(Supplier<@Nullable String> endpointPath, String role, @Nullable String replicaPath,
			@Nullable String replicaRole) {
		this.endpointPath = endpointPath;
		this.role = authority(role);
		this.replicaPath = replicaPath;
		this.replicaRole = replicaRole == null || replicaRole.isBlank() ? null : authority(replicaRole);
	}

	private static String authority(String role) {
		return role.startsWith("ROLE_") ? role : "ROLE_" + role;
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		String needed = neededAuthority(exchange);
		if (needed == null) {
			return chain.filter(exchange);
		}
		return ReactiveSecurityContextHolder.getContext()
			.map(c -> Optional.ofNullable(c.getAuthentication()))
			.defaultIfEmpty(Optional.empty())
			.flatMap(found -> {
				Authentication caller = found.filter(DualMapAccessFilter::authenticated).orElse(null);
				if (caller == null) {
					return refuse(exchange.getResponse(), HttpStatus.UNAUTHORIZED,
							new OpenAiError("this operation needs an authenticated caller", "authentication_error",
									null, "unauthenticated"));
				}
				if (caller.getAuthorities().stream().anyMatch(g -> needed.equals(g.getAuthority()))) {
					return chain.filter(exchange);
				}
				return refuse(exchange.getResponse(), HttpStatus.FORBIDDEN,
						new OpenAiError("this operation needs the role " + needed.substring("ROLE_".length()),
								"permission_error", null, "permission_denied"));
			});
	}

	/** The authority the request needs, or {@code null} when it is not guarded here. */
	private @Nullable String neededAuthority(ServerWebExchange exchange) {
		String path = exchange.getRequest().getPath().pathWithinApplication().value();
		if (this.replicaRole != null && path.equals(this.replicaPath)) {
			return this.replicaRole;
		}
		String endpoint = this.endpointPath.get();
		HttpMethod method = exchange.getRequest().getMethod();
		boolean read = HttpMethod.GET.equals(method) || HttpMethod.HEAD.equals(method)
				|| HttpMethod.OPTIONS.equals(method);
		if (endpoint != null && !read && (path.equals(endpoint) || path.startsWith(endpoint + "/"))) {
			return this.role;
		}
		return null;
	}

	private static boolean authenticated(@Nullable Authentication authentication) {
		return authentication != null && authentication.isAuthenticated()
				&& !(authentication instanceof AnonymousAuthenticationToken);
	}

	private static Mono<Void> refuse(ServerHttpResponse response, HttpStatus status, OpenAiError error) {
		response.setStatusCode(status);
		response.getHeaders().setContentType(MediaType.APPLICATION_JSON);
		return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(error.toJson())));
	}

}
