package io.github.dualmap.autoconfigure;

import java.util.Arrays;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;

import io.github.dualmap.core.DispatchMode;
import io.github.dualmap.core.QueueSettings;
import io.github.dualmap.core.TieBreak;
import io.github.dualmap.core.TtftModel;
import io.github.dualmap.tenant.TenantProperties;
import org.jspecify.annotations.Nullable;

import org.springframework.core.convert.TypeDescriptor;
import org.springframework.core.convert.converter.GenericConverter;

/**
 * Reads the values of the {@code dualmap.*} properties that take one of a few names
 * ({@code dualmap.tie-break}, {@code dualmap.dispatch.mode}, {@code dualmap.ttft.model},
 * ...) as Spring Boot does, without case, dashes or underscores, and refuses any other
 * value with the names it takes: Spring Boot's own message names the enum class and the
 * value alone ({@code No enum constant ...TieBreak.bogus}).
 */
final class EnumValues implements GenericConverter {

	private static final Set<Class<? extends Enum<?>>> TYPES = Set.of(TieBreak.class, DispatchMode.class,
			QueueSettings.Expiry.class, TtftModel.class, TenantProperties.TenantMode.class,
			TenantProperties.BudgetStoreKind.class, TenantProperties.FailureMode.class);

	@Override
	public Set<ConvertiblePair> getConvertibleTypes() {
		return TYPES.stream().map(type -> new ConvertiblePair(String.class, type)).collect(Collectors.toSet());
	}

	@Override
	public @Nullable Object convert(@Nullable Object source, TypeDescriptor sourceType, TypeDescriptor targetType) {
		if (source == null) {
			return null;
		}
		String value = ((String) source).strip();
		if (value.isEmpty()) {
			return null;
		}
		Enum<?>[] constants = (Enum<?>[]) targetType.getType().getEnumConstants();
		for (Enum<?> constant : constants) {
			if (normalized(constant.name()).equals(normalized(value))) {
				return constant;
			}
		}
		throw new IllegalArgumentException("'" + value + "' is none of: "
				+ Arrays.stream(constants)
					.map(c -> c.name().toLowerCase(Locale.ROOT).replace('_', '-'))
					.collect(Collectors.joining(", ")));
	}

	private static String normalized(String name) {
		return name.toLowerCase(Locale.ROOT).replace("-", "").replace("_", "");
	}

}
