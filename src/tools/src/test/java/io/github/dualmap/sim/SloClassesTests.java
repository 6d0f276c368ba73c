package io.github.dualmap.sim;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.withinPercentage;

class SloClassesTests {

	@Test
	void parsesNamesObjectivesAndShares() {
		SloClasses c = SloClasses.parse("interactive=2s:0.2, batch=1m:0.3");
		assertThat(c.classes()).containsExactly(new SloClasses.SloClass("interactive", Duration.ofSeconds(2), 0.2),
				new SloClasses.SloClass("batch", Duration.ofMinutes(1), 0.3));
		assertThat(c.count()).isEqualTo(3);
		assertThat(c.name(2)).isEqualTo("default");
		assertThat(c.sloNanos(0, 5)).isEqualTo(Duration.ofSeconds(2).toNanos());
		assertThat(c.sloNanos(2, 5)).isEqualTo(5);
		assertThat(c.priority(0)).isNull();
		SloClasses banded = SloClasses.parse("interactive=2s:0.2:2, batch=1m:0.3:-1, rest=10s:0.1");
		assertThat(banded.classes()).extracting(SloClasses.SloClass::priority).containsExactly(2, -1, null);
		assertThat(banded.priority(0)).isEqualTo(2);
		assertThat(banded.priority(3)).as("the default class").isNull();
	}

	@Test
	void badSpecificationsAreRefusedNamingWhatIsWrong() {
		assertThatIllegalArgumentException().isThrownBy(() -> SloClasses.parse("interactive:0.2"))
			.withMessageContaining("NAME=DURATION:SHARE");
		assertThatIllegalArgumentException().isThrownBy(() -> SloClasses.parse("a=2s:x"))
			.withMessageContaining("share of 'a'");
		assertThatIllegalArgumentException().isThrownBy(() -> SloClasses.parse("a=2s:0.2:high"))
			.withMessageContaining("priority of 'a'");
		assertThatIllegalArgumentException().isThrownBy(() -> SloClasses.parse("a=2s:0.2:1:2"))
			.withMessageContaining("NAME=DURATION:SHARE[:PRIORITY]");
		assertThatIllegalArgumentException().isThrownBy(() -> SloClasses.parse("a=soon:0.2"))
			.withMessageContaining("--slo-classes must be a duration");
		assertThatIllegalArgumentException().isThrownBy(() -> SloClasses.parse("a=2s:0.6,b=3s:0.5"))
			.withMessageContaining("more than 1");
		assertThatIllegalArgumentException().isThrownBy(() -> SloClasses.parse("a=2s:0.2,a=3s:0.2"))
			.withMessageContaining("given twice");
		assertThatIllegalArgumentException().isThrownBy(() -> SloClasses.parse("default=2s:0.2"))
			.withMessageContaining("other than 'default'");
		assertThatIllegalArgumentException().isThrownBy(() -> SloClasses.parse("a=0s:0.2"))
			.withMessageContaining("objective > 0");
		assertThatIllegalArgumentException().isThrownBy(() -> SloClasses.parse("a=2s:0"))
			.withMessageContaining("share in (0, 1]");
	}

	@Test
	void requestsFallIntoClassesByTheirSharesTheSameWayForOneSeed() {
		SloClasses c = new SloClasses(List.of(new SloClasses.SloClass("a", Duration.ofSeconds(1), 0.2),
				new SloClasses.SloClass("b", Duration.ofSeconds(9), 0.3)));
		int[] counts = new int[3];
		int differ = 0;
		for (int i = 0; i < 100_000; i++) {
			int k = c.classOf(i, 42);
			counts[k]++;
			assertThat(c.classOf(i, 42)).isEqualTo(k);
			differ += c.classOf(i, 43) != k ? 1 : 0;
		}
		assertThat(counts[0]).isCloseTo(20_000, withinPercentage(3));
		assertThat(counts[1]).isCloseTo(30_000, withinPercentage(3));
		assertThat(counts[2]).isCloseTo(50_000, withinPercentage(3));
		assertThat(differ).as("another seed draws other requests").isGreaterThan(30_000);
	}

}
