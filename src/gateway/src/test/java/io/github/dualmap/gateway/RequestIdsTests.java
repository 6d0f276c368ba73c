package io.github.dualmap.gateway;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RequestIdsTests {

	@Test
	void idsAreUniqueAcrossThreadsAndShareTheProcessPrefix() {
		Set<String> ids = ConcurrentHashMap.newKeySet();
		IntStream.range(0, 100_000).parallel().forEach(i -> ids.add(RequestIds.next()));
		assertThat(ids).hasSize(100_000);
		String one = RequestIds.next();
		// 8 random bytes as hex, then the counter.
		assertThat(one).matches("[0-9a-f]{16}-[0-9a-f]+");
		assertThat(ids).allSatisfy(id -> assertThat(id).startsWith(one.substring(0, 17)));
	}

}
