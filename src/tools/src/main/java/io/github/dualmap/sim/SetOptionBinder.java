package io.github.dualmap.sim;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.github.dualmap.autoconfigure.DualMapProperties;
import jakarta.validation.Validation;
import jakarta.validation.ValidatorFactory;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.context.properties.bind.validation.ValidationBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.validation.beanvalidation.SpringValidatorAdapter;

/**
 * Binds a command's {@code --set PROPERTY=VALUE} options ({@code sim --set},
 * {@code overhead --set}) into the gateway's {@code dualmap.*} properties, validated
 * exactly as the gateway binds its {@code application.yml}: a setting means the same in
 * both, and a bad one fails with the gateway's message, in one line and before the
 * command starts anything. Properties that a command's option or input decides are
 * refused with the option to use.
 */
public final class SetOptionBinder {

	/** Properties the simulator sets itself, with what decides them instead. */
	private static final Map<String, String> DECIDED_BY_SIM = Map.of("dualmap.slo.ttft", "--slo-ttft",
			"dualmap.prompt.block-tokens", "the trace's block size", "dualmap.shadow.capacity-tokens",
			"--profile (the engine's KV capacity)", "dualmap.slow-start", "--slow-start", "dualmap.dispatch.mode",
			"--policies (each row has its dispatch mode)", "dualmap.policy", "--policies", "dualmap.replicas.enabled",
			"--replica-sync");

	private SetOptionBinder() {
	}

	/**
	 * Binds {@code assignments} ({@code name=value}, names with the {@code dualmap.}
	 * prefix) over the gateway's defaults, for {@code sim}.
	 * @throws IllegalArgumentException naming the assignment or property that is wrong
	 */
	static DualMapProperties bind(List<String> assignments) {
		return bind(assignments, "sim", DECIDED_BY_SIM);
	}

	/**
	 * Binds {@code assignments} ({@code name=value}, names with the {@code dualmap.}
	 * prefix) over the gateway's defaults, for {@code command}, which refuses the
	 * properties {@code decidedByCommand} names, each with what decides it instead.
	 * @param assignments the {@code --set} values
	 * @param command the command's name, for messages
	 * @param decidedByCommand property name to what decides it in {@code command}
	 * @return the bound properties
	 * @throws IllegalArgumentException naming the assignment or property that is wrong
	 */
	public static DualMapProperties bind(List<String> assignments, String command,
			Map<String, String> decidedByCommand) {
		Map<String, String> values = new LinkedHashMap<>();
		for (String a : assignments) {
			int eq = a.indexOf('=');
			if (eq <= 0) {
				throw new IllegalArgumentException("--set needs PROPERTY=VALUE but got '" + a + "'");
			}
			String name = a.substring(0, eq).strip();
			if (!name.startsWith(DualMapProperties.PREFIX + ".")) {
				throw new IllegalArgumentException(
						"--set takes " + DualMapProperties.PREFIX + ".* properties but got '" + name + "'");
			}
			if (name.startsWith(DualMapProperties.PREFIX + ".demo.")) {
				// The demo's own properties (DemoProperties), not the gateway's: named
				// here rather than as an unknown key.
				throw new IllegalArgumentException("--set takes the gateway's " + DualMapProperties.PREFIX
						+ ".* properties but got '" + name + "', a property of the demo profile");
			}
			// Compared as Spring compares names (case and dashes aside), so another
			// spelling of a refused property is refused too, and so is an element of
			// one (dualmap.services[0]).
			ConfigurationPropertyName bound = ConfigurationPropertyName.adapt(name, '.');
			String decidedBy = decidedByCommand.entrySet().stream().filter(e -> {
				ConfigurationPropertyName refused = ConfigurationPropertyName.of(e.getKey());
				return refused.equals(bound) || refused.isAncestorOf(bound);
			}).map(Map.Entry::getValue).findFirst().orElse(null);
			if (decidedBy != null) {
				throw new IllegalArgumentException("--set " + name + " is decided by " + decidedBy + " in " + command);
			}
			values.put(name, a.substring(eq + 1).strip());
		}
		if (values.isEmpty()) {
			return new DualMapProperties();
		}
		// The validator announces its version at INFO on first use: noise on a CLI.
		LoggingSystem.get(SetOptionBinder.class.getClassLoader()).setLogLevel("org.hibernate.validator", LogLevel.WARN);
		try (ValidatorFactory factory = Validation.buildDefaultValidatorFactory()) {
			BindHandler handler = new ValidationBindHandler(new NoUnboundElementsBindHandler(BindHandler.DEFAULT),
					new SpringValidatorAdapter(factory.getValidator()));
			return new Binder(new MapConfigurationPropertySource(values)).bindOrCreate(DualMapProperties.PREFIX,
					Bindable.of(DualMapProperties.class), handler);
		}
		catch (BindException ex) {
			throw new IllegalArgumentException("--set: " + message(ex), ex);
		}
	}

	/** The validation messages (they name the property), else the innermost cause's. */
	private static String message(BindException ex) {
		if (ex.getCause() instanceof BindValidationException invalid) {
			return invalid.getValidationErrors()
				.getAllErrors()
				.stream()
				.map(e -> e.getDefaultMessage() == null ? e.toString() : e.getDefaultMessage())
				.collect(Collectors.joining("; "));
		}
		String root = rootMessage(ex);
		return root.equals(ex.getMessage()) ? root : ex.getMessage() + ": " + root;
	}

	private static String rootMessage(Throwable ex) {
		Throwable t = ex;
		while (t.getCause() != null && t.getCause() != t) {
			t = t.getCause();
		}
		String message = t.getMessage();
		return message == null ? ex.getMessage() : message.strip().replaceAll("\\s+", " ");
	}

}
