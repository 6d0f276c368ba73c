package io.github.dualmap.autoconfigure;

import jakarta.validation.constraints.NotBlank;
import org.jspecify.annotations.Nullable;

/**
 * {@code dualmap.security.*}: applied only when Spring Security is on the classpath.
 */
public class SecurityRolesProperties {

	/**
	 * Role (without the ROLE_ prefix) an authenticated caller needs for the write
	 * operations of the dualmap actuator endpoint (drain, undrain).
	 */
	@NotBlank(message = "dualmap.security.role must not be blank")
	private String role = "DUALMAP_OPERATOR";

	/**
	 * Role (without the ROLE_ prefix) a caller of the replica-sync path needs besides
	 * dualmap.replicas.token, for gateways whose security chain authenticates their peers
	 * (mutual TLS, for example). Unset: the token alone.
	 */
	private @Nullable String replicaRole;

	public String getRole() {
		return this.role;
	}

	public void setRole(String role) {
		this.role = role;
	}

	public @Nullable String getReplicaRole() {
		return this.replicaRole;
	}

	public void setReplicaRole(@Nullable String replicaRole) {
		this.replicaRole = replicaRole;
	}

}
