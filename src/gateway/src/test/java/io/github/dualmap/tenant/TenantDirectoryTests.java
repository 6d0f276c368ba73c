package io.github.dualmap.tenant;

import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** Named tenants read from the configuration, their defaults and the checks on names. */
class TenantDirectoryTests {

	private static TenantDirectory directory(Map<String, Object> tenants, TenantProperties.Tenant defaults) {
		return new TenantDirectory(NamedTenants.read(tenants), defaults, 64);
	}

	@Test
	void aTenantTakesTheDefaultsOfWhatItLeavesOut() {
		TenantProperties.Tenant defaults = new TenantProperties.Tenant();
		defaults.setTokensPerDay(1_000_000L);
		defaults.setPriority(3);
		Map<String, Object> tenants = new LinkedHashMap<>();
		tenants.put("header", "x-team");
		tenants.put("acme", Map.of("weight", "2.5", "tokens-per-minute", "1000", "models",
				Map.of("big/model-70b", Map.of("tokens-per-day", "5000"))));
		TenantDirectory directory = directory(tenants, defaults);
		assertThat(directory.named()).containsOnlyKeys("acme");
		TenantSettings acme = directory.settings("acme");
		assertThat(acme.weight()).isEqualTo(2.5);
		assertThat(acme.priority()).isEqualTo(3);
		assertThat(acme.tokensPerMinute()).isEqualTo(1000);
		assertThat(acme.tokensPerDay()).isEqualTo(1_000_000);
		assertThat(directory.lines("acme", "big/model-70b")).extracting(BudgetLine::key)
			.containsExactly("{acme}:m", "{acme}:d", "{acme}:model:big/model-70b:d");
		assertThat(directory.lines("acme", "small")).hasSize(2);
		assertThat(directory.settings("stranger")).isEqualTo(directory.defaults());
		assertThat(directory.defaults().weight()).isEqualTo(1.0);
	}

	@Test
	void onlyConfiguredNamesAreReportedAsThemselves() {
		TenantDirectory directory = directory(Map.of("acme", Map.of("weight", "1")), new TenantProperties.Tenant());
		assertThat(directory.reported("acme")).isEqualTo("acme");
		assertThat(directory.reported("default")).isEqualTo("default");
		assertThat(directory.reported("anyone")).isEqualTo("other");
		assertThat(directory.configuredKey("{acme}:m")).isTrue();
		assertThat(directory.configuredKey("{default}:d")).isTrue();
		assertThat(directory.configuredKey("{anyone}:m")).isFalse();
	}

	@Test
	void theFairnessSwitchIsASettingNotATenant() {
		assertThat(NamedTenants.read(Map.of("fairness", "false", "acme", Map.of("weight", "2"))))
			.containsOnlyKeys("acme");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new TenantDirectory(Map.of("fairness", new TenantProperties.Tenant()),
					new TenantProperties.Tenant(), 64))
			.withMessageContaining("dualmap.tenants.fairness is a setting");
	}

	@Test
	void namesAreValidated() {
		TenantDirectory directory = directory(Map.of(), new TenantProperties.Tenant());
		assertThat(directory.valid("team-a.prod:eu@x_1")).isTrue();
		assertThat(directory.valid("")).isFalse();
		assertThat(directory.valid("a b")).isFalse();
		assertThat(directory.valid("ü")).isFalse();
		assertThat(directory.valid("a".repeat(64))).isTrue();
		assertThat(directory.valid("a".repeat(65))).isFalse();
	}

	@Test
	void badTenantSettingsNameTheProperty() {
		TenantProperties.Tenant none = new TenantProperties.Tenant();
		assertThatIllegalArgumentException().isThrownBy(() -> directory(Map.of("acme", Map.of("wieght", "2")), none))
			.withMessageContaining("dualmap.tenants.acme.wieght");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> directory(Map.of("acme", Map.of("tokens-per-minute", "0")), none))
			.withMessageContaining("dualmap.tenants.acme.tokens-per-minute must be >= 1");
		assertThatIllegalArgumentException().isThrownBy(() -> directory(Map.of("acme", Map.of("weight", "-1")), none))
			.withMessageContaining("dualmap.tenants.acme.weight must be > 0");
		assertThatIllegalArgumentException().isThrownBy(() -> directory(Map.of("headr", "x"), none))
			.withMessageContaining("dualmap.tenants.headr is neither a setting");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> directory(Map.of("bad name", Map.of("weight", "1")), none))
			.withMessageContaining("a tenant name must be");
	}

	@Test
	void costsAreWeightedPerKind() {
		TenantProperties.Cost weights = new TenantProperties.Cost();
		weights.setCachedPromptWeight(0.1);
		weights.setCompletionWeight(2);
		assertThat(new TokenUsage(100, 50, 10).cost(weights)).isEqualTo(50 + 5 + 20);
		assertThat(new TokenUsage(10, 20, 0).cachedTokens()).isEqualTo(10);
	}

}
